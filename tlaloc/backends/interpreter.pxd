# Types for the compiled build of interpreter.py (docs/native.md); Python never reads this
# file. `run_now` runs on every operation recorded on small host values: it reads the
# operand nodes' fields directly, and the PJRT backend calls it as a C function.
cimport cython
from tlaloc._graph cimport Node
from tlaloc._prims.core cimport Primitive

@cython.locals(x=Node, y=Node, n=Node, limit=Py_ssize_t, size=Py_ssize_t, extent=Py_ssize_t)
cpdef run_now(Primitive prim, params, tuple inputs, want, backend)
