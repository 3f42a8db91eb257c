#!/usr/bin/env python
"""Run the official data-apis/array-api-tests suite against tlaloc.

    python conformance/run_official.py --suite /tmp/array-api-tests [--device cpu|interpreter]
        [--execution compiled|auto|interpreted] [--max-examples N] [--json report.json]
        [-- extra pytest arguments, e.g. -k test_sum or array_api_tests/test_linalg.py]

The suite is not vendored: give a checkout of https://github.com/data-apis/array-api-tests
with its `array-api` submodule (the spec stubs) checked out (`git submodule update --init`).
The runner needs pytest, pytest-json-report, hypothesis and ndindex (not tlaloc dependencies).

What it sets up:
  * ARRAY_API_TESTS_MODULE=tlaloc (the suite tests `tlaloc.__array_api_version__`, 2025.12);
  * TLALOC_DEVICE=<device>; on "cpu", TLALOC_EXECUTION=<execution> ("compiled" by default,
    so every program goes through XLA; "auto" is the tiered default users get);
  * --disable-deadline (the suite's 800 ms per-example deadline counts compile time);
  * the linalg and fft extensions stay enabled (the suite enables what the namespace has);
  * conformance/official-xfails.txt, the project's checked-in list of expected failures:
    one test id per line, every entry preceded by `#` comment lines giving its reason.
    The runner strips the comments and hands the ids to the suite's --xfails-file.

At the end it prints pass/fail/skip/xfail counts and the wall time, and exits with pytest's
status (0: no failures).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_XFAILS = HERE / "official-xfails.txt"


def read_xfails(path: pathlib.Path) -> list[str]:
    """Test ids from the project's xfail list. Every id must come after a reason comment."""
    ids, reason = [], None
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line:
            reason = None
            continue
        if line.startswith("#"):
            reason = (reason or "") + line[1:].strip()
            continue
        if not reason:
            raise SystemExit(f"{path}:{lineno}: xfail entry {line!r} has no reason comment above it")
        ids.append(line)
    return ids


def check_suite(suite: pathlib.Path) -> None:
    if not (suite / "array_api_tests").is_dir():
        raise SystemExit(f"{suite} is not an array-api-tests checkout (no array_api_tests/)")
    stubs = suite / "array-api" / "src" / "array_api_stubs"
    if not stubs.is_dir():
        raise SystemExit(
            f"{stubs} is missing: the suite needs the spec stubs of its `array-api` submodule.\n"
            f"Run `git submodule update --init` in {suite}, or unpack data-apis/array-api at the "
            f"commit the suite pins (`git ls-tree HEAD array-api`) into {suite}/array-api.")


def summarize(report_path: pathlib.Path) -> dict:
    data = json.loads(report_path.read_text())
    counts: dict[str, int] = {}
    failed = []
    for test in data.get("tests", []):
        outcome = test["outcome"]
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("failed", "error"):
            failed.append(test["nodeid"])
    return {"counts": counts, "failed": failed, "collected": data["summary"].get("collected")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", required=True, type=pathlib.Path,
                        help="path of an array-api-tests checkout (with its array-api submodule)")
    parser.add_argument("--device", choices=("cpu", "interpreter"), default="cpu")
    parser.add_argument("--execution", choices=("compiled", "auto", "interpreted"),
                        default="compiled", help="tlaloc execution mode on the cpu device")
    parser.add_argument("--max-examples", type=int, default=100,
                        help="hypothesis examples per test (the suite's default: 100)")
    parser.add_argument("--xfails", type=pathlib.Path, default=DEFAULT_XFAILS,
                        help="xfail list (default: conformance/official-xfails.txt)")
    parser.add_argument("--json", type=pathlib.Path, default=None,
                        help="where to keep pytest-json-report's report")
    parser.add_argument("pytest_args", nargs="*",
                        help="extra pytest arguments (after --), e.g. a test file or -k EXPR")
    args = parser.parse_args(argv)

    suite = args.suite.resolve()
    check_suite(suite)
    for module in ("pytest_jsonreport", "ndindex", "hypothesis"):
        try:
            __import__(module)
        except ImportError:
            raise SystemExit(f"missing {module}: pip install pytest-json-report ndindex hypothesis")

    env = dict(os.environ)
    env["ARRAY_API_TESTS_MODULE"] = "tlaloc"
    env["TLALOC_DEVICE"] = args.device
    if args.device == "cpu":
        env["TLALOC_EXECUTION"] = args.execution
    env.setdefault("PYTHONHASHSEED", "0")

    with tempfile.TemporaryDirectory(prefix="tlaloc-official-") as tmp:
        tmp = pathlib.Path(tmp)
        xfail_file = tmp / "xfails.txt"
        xfail_file.write_text("".join(i + "\n" for i in read_xfails(args.xfails)))
        report = args.json.resolve() if args.json else tmp / "report.json"
        targets = [a for a in args.pytest_args if a.startswith("array_api_tests")]
        cmd = [sys.executable, "-m", "pytest",
               *([] if targets else ["array_api_tests/"]),
               "-p", "no:cacheprovider", "-q", "-rfE",
               f"--max-examples={args.max_examples}", "--disable-deadline",
               f"--xfails-file={xfail_file}",
               "--json-report", f"--json-report-file={report}",
               *args.pytest_args]
        print("running:", " ".join(cmd), f"(cwd {suite}, device {args.device}"
              + (f", execution {args.execution}" if args.device == "cpu" else "") + ")",
              flush=True)
        start = time.perf_counter()
        rc = subprocess.call(cmd, cwd=suite, env=env)
        wall = time.perf_counter() - start
        if report.exists():
            summary = summarize(report)
            counts = ", ".join(f"{k} {v}" for k, v in sorted(summary["counts"].items()))
            print(f"\ntlaloc on {args.device}: {counts} (collected {summary['collected']}); "
                  f"wall {wall:.0f} s")
            for nodeid in summary["failed"]:
                print("  FAILED", nodeid)
        else:
            print(f"\nno report written; wall {wall:.0f} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
