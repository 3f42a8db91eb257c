# Types for the compiled build of _core.py (docs/native.md); Python never reads this file.
# The two-operand fast path reads the nodes' fields directly.
cimport cython
from tlaloc._graph cimport Node

@cython.locals(na=Node, nb=Node)
cpdef _pair(name, a, b)
