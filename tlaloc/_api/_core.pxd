# Types for the compiled build of _core.py (docs/native.md); Python never reads this file.
# The two-operand fast path reads the nodes' fields directly; the namespace modules call
# the cpdef functions as C functions (their .pxd files cimport them).
cimport cython
from tlaloc._graph cimport Node

@cython.locals(na=Node, nb=Node)
cpdef _pair(name, a, b)

cpdef tuple binary_operands(name, x1, x2)

cpdef node_of(name, x, argname=*)
