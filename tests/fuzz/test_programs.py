"""Random programs over the namespace agree with the reference on every backend and mode,
and never crash the process (runner.py, programs.py). Budget and seed: see __init__.py."""
from . import PROGRAMS, SEED
from .programs import programs
from .rounds import fuzz
from .runner import check_program, focused, format_failures


def test_random_programs(worker, fuzz_stats):
    stats = fuzz_stats["programs"]
    run = focused(lambda program, modes: check_program(worker, program, stats, modes))

    def check(program):
        failures = run(program)
        assert not failures, format_failures(failures, SEED)
    fuzz(check, programs(), SEED, PROGRAMS)
