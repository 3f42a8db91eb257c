# Types for the compiled build of _graph.py (docs/native.md); Python never reads this file.
# The node as an extension type: its attributes are C fields, read directly by `bind`.
cimport cython

cdef class Node:
    cdef public object prim, inputs, params, aval, device, value, consumers, owner, number, where
    cdef public Py_ssize_t pending
    cdef object __weakref__

@cython.locals(node=Node, n=Node, depth=Py_ssize_t)
cpdef bind(prim, inputs, params, device=*)
