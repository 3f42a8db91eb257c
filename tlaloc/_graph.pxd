# Types for the compiled build of _graph.py (docs/native.md); Python never reads this file.
# The node as an extension type: its attributes are C fields, read directly by `bind`.
cimport cython

cdef class Node:
    cdef public object prim, inputs, params, aval, device, value, consumers, owner, number, where
    cdef public Py_ssize_t pending
    cdef object __weakref__

@cython.locals(node=Node, n=Node, x=Node, y=Node, depth=Py_ssize_t, n_in=Py_ssize_t)
cpdef bind(prim, inputs, params, device=*)

@cython.locals(node=Node)
cpdef leaf(value, aval, device)

# the plan's walk over the pending graph (every name bound to a node is typed as one)
@cython.locals(node=Node, n=Node, x=Node, t=Node, c=Node, prim=object, pending=list, seen=set,
               stack=list, index=dict, leaves=list, eq_keys=list, slots=list, outputs=list,
               returned=set)
cpdef tuple _pending_graph(targets)

@cython.locals(n=Node)
cpdef _evaluate(nodes)

@cython.locals(node=Node, l=Node, n_in=Py_ssize_t)
cpdef _run_plan(targets, device)

cpdef note_pending_owner(ref)

# the cycle collector's view of nodes (see "Nodes and the cycle collector" in _graph.py)
cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object op)
    int PyObject_GC_IsTracked(object op)
