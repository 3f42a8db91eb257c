"""Random programs over the namespace agree with the reference on every backend and mode,
and never crash the process (runner.py, programs.py). Budget and seed: see __init__.py."""
from . import PROGRAMS, SEED
from .programs import programs
from .rounds import fuzz
from .runner import check_program, format_failures


def test_random_programs(worker, fuzz_stats):
    def check(program):
        failures = check_program(worker, program, fuzz_stats["programs"])
        assert not failures, format_failures(failures, SEED)
    fuzz(check, programs(), SEED, PROGRAMS)
