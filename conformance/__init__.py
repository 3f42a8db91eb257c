"""tlaloc's conformance suite: differential tests against array-api-strict (test_*.py) and
the runner of the official data-apis/array-api-tests suite (run_official.py)."""
