# The processor's floating-point control register, for the compiled build of _fpenv.py: its
# block reads and writes the register that holds the flush bits (x86-64: MXCSR; AArch64:
# FPCR) directly. The whole C environment (fegetenv/fesetenv) also saves and loads the x87
# unit's, which made a block cost ~0.8 us: too much for an operation run as it is recorded.
# call_flushed sets NumPy's error state through the context variable's C API.
from cpython.contextvars cimport PyContextVar_Set, PyContextVar_Reset

cdef extern from *:
    """
    #if defined(__x86_64__) || defined(_M_X64)
    #include <xmmintrin.h>
    static unsigned int tlaloc_control_word(void) { return _mm_getcsr(); }
    static void tlaloc_set_control_word(unsigned int word) { _mm_setcsr(word); }
    #elif defined(__aarch64__)
    static unsigned int tlaloc_control_word(void) {
        unsigned long word;
        __asm__ __volatile__("mrs %0, fpcr" : "=r"(word));
        return (unsigned int)word;
    }
    static void tlaloc_set_control_word(unsigned int word) {
        unsigned long wide = word;
        __asm__ __volatile__("msr fpcr, %0" : : "r"(wide));
    }
    #else
    /* no known register: _fpenv.FLUSHES is False on these platforms and never calls these */
    static unsigned int tlaloc_control_word(void) { return 0; }
    static void tlaloc_set_control_word(unsigned int word) { (void)word; }
    #endif
    """
    unsigned int tlaloc_control_word()
    void tlaloc_set_control_word(unsigned int word)
