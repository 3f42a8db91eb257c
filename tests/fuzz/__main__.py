"""The fuzzer outside pytest: runs many programs and prints what happened.

    python -m tests.fuzz --programs 100000 --seed 1
    python -m tests.fuzz --derivatives 1000 --seconds 600 --jobs 2

Every program counts; a failure of a kind not seen before in the run (kind, mode and signal
or exception type) is shrunk by hypothesis and its minimal reproduction printed; later
failures of that kind are only counted (add a KNOWN_ISSUES entry, or fix it, to look past
it). Prints programs run per mode, crashes, hangs, exceptions where the reference succeeds,
mismatches, and the known issues matched.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
import traceback

from hypothesis import HealthCheck, Phase, given, seed, settings

from . import SEED
from .derivatives import DEVICES, check_derivative_program, derivative_programs
from .programs import programs
from .runner import MODES, Stats, check_program, format_failures
from .worker import ROOT, Worker


class _Found(Exception):
    pass


def _found(text):
    """Raise _Found from one place: hypothesis tells failures apart by where they are
    raised, and the first sighting and the shrinking replays must look alike."""
    raise _Found(text)


def signature(failure) -> tuple:
    detail = failure.detail.split("\n", 1)[0]
    if failure.kind == "crash":
        key = detail.split(":", 1)[-1].strip()          # "signal SIGSEGV"
    elif failure.kind == "exception":
        key = detail.split(":", 1)[0]                    # the exception type
    else:
        key = failure.op                                 # the operation of the output
    return failure.kind, failure.mode, key


ROUND = 200     # examples per hypothesis run of fuzz_loop


def fuzz_loop(strategy, check, stats, count, start_seed, deadline, shrink, found, counts, log):
    """Run `count` examples (or until `deadline`), in rounds that end when a new kind of
    failure has been shrunk, or after ROUND examples: past the deadline hypothesis would go on
    drawing (not running) the rest of a round's examples, which costs as much as drawing."""
    remaining, round_seed = count, start_seed
    while remaining > 0 and time.monotonic() < deadline:
        state = {"target": None, "generated": 0}

        @seed(round_seed)
        @settings(max_examples=min(remaining, ROUND), deadline=None, database=None,
                  phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def one(example):
            if state["target"] is not None:          # shrinking: only the target failure counts
                failures = check(example, Stats(), (state["target"][1],))
                hit = [f for f in failures if signature(f) == state["target"]]
                if hit:
                    _found(format_failures(hit))
                return
            if time.monotonic() >= deadline:
                return
            state["generated"] += 1
            failures = check(example, stats, None)
            for f in failures:
                counts[signature(f)] += 1
            new = [f for f in failures if signature(f) not in found]
            if new:
                sig = signature(new[0])
                found[sig] = format_failures(new)        # until the shrunk one replaces it
                log(f"new failure {sig}, shrinking" if shrink else f"new failure {sig}")
                if shrink:
                    state["target"] = sig
                    _found(found[sig])
        try:
            one()
        except _Found as exc:
            found[state["target"]] = str(exc)
        except Exception:
            # the harness's own error (a generator drew something its reference cannot
            # compute), not tlaloc's: counted and reported once, and the run goes on
            sig = ("harness", "-", sys.exc_info()[0].__name__)
            counts[sig] += 1
            found.setdefault(sig, traceback.format_exc())
            log(f"harness error {sig}")
        remaining -= max(state["generated"], 1)
        round_seed = (round_seed + 7919) % 2 ** 32


def run(args, log):
    deadline = time.monotonic() + (args.seconds if args.seconds else float("inf"))
    stats, dstats = Stats(), Stats()
    found, counts = {}, collections.Counter()
    with Worker() as worker:
        if args.programs:
            fuzz_loop(programs(), lambda p, s, m: check_program(worker, p, s, m or MODES), stats,
                      args.programs, args.seed, deadline, args.shrink, found, counts, log)
        if args.derivatives:
            fuzz_loop(derivative_programs(),
                      lambda p, s, m: check_derivative_program(worker, p, s, m or DEVICES),
                      dstats, args.derivatives, args.seed + 1, deadline, args.shrink, found,
                      counts, log)
        restarts = worker.started
    return {"programs": stats, "derivatives": dstats, "found": found, "counts": counts,
            "worker_starts": restarts}


def _to_json_stats(s):
    return {"programs": s.programs, "runs": dict(s.runs), "failures": dict(s.failures),
            "known": dict(s.known), "checked": s.checked, "elements": s.elements,
            "seconds": s.seconds}


def _to_json(result):
    stats = _to_json_stats
    return {"programs": stats(result["programs"]), "derivatives": stats(result["derivatives"]),
            "found": [[list(k), v] for k, v in result["found"].items()],
            "counts": [[list(k), n] for k, n in result["counts"].items()]}


def _from_json(data):
    def stats(d):
        s = Stats(programs=d["programs"], checked=d["checked"], elements=d["elements"],
                  seconds=d["seconds"])
        s.runs.update(d["runs"])
        s.failures.update(d["failures"])
        s.known.update(d["known"])
        return s
    return {"programs": stats(data["programs"]), "derivatives": stats(data["derivatives"]),
            "found": {tuple(k): v for k, v in data["found"]},
            "counts": collections.Counter({tuple(k): n for k, n in data["counts"]})}


def run_jobs(args):
    """`--jobs J`: J processes, each with its share and its own seed; results merged."""
    procs, outs = [], []
    for j in range(args.jobs):
        out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"tlaloc-fuzz-{os.getpid()}-{j}.json")
        cmd = [sys.executable, "-m", __package__, "--programs", str(-(-args.programs // args.jobs)),
               "--derivatives", str(-(-args.derivatives // args.jobs)), "--seed",
               str((args.seed + 1000003 * j) % 2 ** 32), "--json", out]
        if args.seconds:
            cmd += ["--seconds", str(args.seconds)]
        if not args.shrink:
            cmd.append("--no-shrink")
        procs.append(subprocess.Popen(cmd, cwd=ROOT))
        outs.append(out)
    merged = None
    for j, (p, out) in enumerate(zip(procs, outs)):
        p.wait()
        try:
            with open(out) as fh:
                part = _from_json(json.load(fh))
            os.unlink(out)
        except (OSError, ValueError) as e:     # that job died: its share is reported lost
            part = _from_json({"programs": _to_json_stats(Stats()), "derivatives":
                               _to_json_stats(Stats()), "found": [[["harness", "-", f"job {j}"],
                               f"job {j} ended with status {p.returncode} and no result ({e})"]],
                               "counts": [[["harness", "-", f"job {j}"], 1]]})
        if merged is None:
            merged = part
            continue
        merged["programs"].add(part["programs"])
        merged["derivatives"].add(part["derivatives"])
        for k, v in part["found"].items():
            merged["found"].setdefault(k, v)
        merged["counts"].update(part["counts"])
    return merged


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--derivatives", type=int, default=0)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-shrink", dest="shrink", action="store_false")
    parser.add_argument("--json", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)
    start = time.monotonic()
    result = run_jobs(args) if args.jobs > 1 else run(args, log)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(_to_json(result), fh)
        return 0
    print(f"seed {args.seed}, {time.monotonic() - start:.0f} s wall")
    for name in ("programs", "derivatives"):
        s = result[name]
        if s.programs:
            print(f"[{name}] " + s.report().replace("\n", f"\n[{name}] "))
    for sig, n in result["counts"].most_common():
        print(f"  {n:6d}  {sig}")
    for sig, text in result["found"].items():
        print("=" * 100)
        print(f"{sig}:\n{text}")
    return 1 if result["counts"] else 0


if __name__ == "__main__":
    sys.exit(main())
