# Types for the compiled build of core.py (docs/native.md); Python never reads this file.
# Elementwise infer rules call the common-aval check as a C function.
cpdef _common_aval(x, tuple rest)
