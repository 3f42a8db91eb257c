# The C library's floating-point environment, for the compiled build of _fpenv.py (its
# block calls these directly instead of through ctypes).
cdef extern from "<fenv.h>":
    ctypedef struct fenv_t:
        pass
    int fegetenv(fenv_t *envp)
    int fesetenv(const fenv_t *envp)
