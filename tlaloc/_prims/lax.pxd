# Types for the compiled build of lax.py (docs/native.md); Python never reads this file.
from tlaloc._graph cimport bind
