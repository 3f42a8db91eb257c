# Types for the compiled build of _array.py (docs/native.md); Python never reads this file.
# Every operation's result Array is made by from_node, which reads the node's fields directly.
cimport cython
from tlaloc._graph cimport Node, note_pending_owner as _note_pending_owner

@cython.locals(node=Node)
cpdef from_node(node)
