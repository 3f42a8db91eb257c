"""Random differentiable float64 programs: grad, jvp and (for a third of them) jvp of grad
and grad of grad agree with central differences of the same program on array-api-strict,
on the interpreter and on the compiled CPU backend (derivatives.py)."""
from . import DERIVATIVE_PROGRAMS, SEED
from .derivatives import DEVICES, check_derivative_program, derivative_programs
from .rounds import fuzz
from .runner import focused, format_failures


def test_random_derivatives(worker, fuzz_stats):
    stats = fuzz_stats["derivatives"]
    run = focused(lambda program, devices: check_derivative_program(worker, program, stats,
                                                                    devices), DEVICES)

    def check(program):
        failures = run(program)
        assert not failures, format_failures(failures, SEED)
    fuzz(check, derivative_programs(), SEED + 1, DERIVATIVE_PROGRAMS)
