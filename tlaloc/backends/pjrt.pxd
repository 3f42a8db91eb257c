# Types for the compiled build of pjrt.py (docs/native.md); Python never reads this file.
# An operation on small host values is run through the interpreter's run_now as a C call.
from tlaloc.backends.interpreter cimport run_now
