"""asv benchmarks of tlaloc (see docs/benchmarks.md), and `compare.py`, which runs the same
workloads with NumPy, JAX and PyTorch side by side."""
