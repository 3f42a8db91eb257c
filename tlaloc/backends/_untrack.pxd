# The C API call of the compiled build of _untrack.py.
cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object op)
