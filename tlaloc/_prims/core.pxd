# Types for the compiled build of core.py (docs/native.md); Python never reads this file.
# Elementwise infer rules call the common-aval check as a C function.
cpdef _common_aval(x, tuple rest)

# The primitive as an extension type: the interpreter's `run_now` (every operation run as it
# is recorded) reads its rules as C fields.
cdef class Primitive:
    cdef public object name, infer, emit, impl, jvp, vjp, source, elementwise, names, formula
    cdef public object formula_kinds, formula_cache, op_emit, op_impl, batch, padding
    cdef public object impl_into, into_operands, moves_data
    cdef object __weakref__
