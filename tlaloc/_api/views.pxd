# Types for the compiled build of views.py (docs/native.md); Python never reads this file.
# A family and a member's view are extension types: `view`, which makes them on every
# `.T`, reshape and basic index, sets and reads their fields directly.
cimport cython

cdef class _Family:
    cdef public object storage, members, prune_at

cdef class _View:
    cdef public object family, steps, shape, strides, itemsize, offset, _extent

@cython.locals(parent=_View, family=_Family)
cpdef view(x, step, strides, itemsize=*, offset=*)
