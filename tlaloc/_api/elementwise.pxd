# Types for the compiled build of elementwise.py (docs/native.md); Python never reads this
# file. Every function records through these as C calls.
from tlaloc._array cimport from_node as wrap
from tlaloc._api._core cimport binary_operands, node_of

cpdef tuple _binary(name, x1, x2, kinds, what)

cpdef _inexact(name, x)
