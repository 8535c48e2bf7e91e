#!/usr/bin/env python3
"""W1 side by side: the published 2015 AWS backoff simulator against stagger's `contention`
workload, on the same setup (100 clients x 100 rounds, the five published policies), in one run
on this machine, and the ratio of their times.

usage: python3 scripts/w1_vs_python.py REFERENCE_DIR [--rounds N] [--trials T]

REFERENCE_DIR holds `backoff_simulator_2015.py` (aws-samples/aws-arch-backoff-simulator,
src/backoff_simulator.py) and the driver `w1_reference.py` that runs it unchanged on N clients x
R rounds. Nothing of it is copied into this project: the script runs it where it is.

Both sides are timed end to end as a user runs them (the interpreter or the binary started, the
five policies run, the results printed), trials interleaved, the best of each kept. stagger's
side is the release build of `stagger simulate --workload contention`, one process per policy
(each policy has its own base, cap and attempt limit); its own `--stats` figures give the time
inside the five runs as well. Each side's writes per round are printed beside the other's, so
that the setup is seen to be the same.
"""

import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "stagger")

# The five published policies, as stagger names them, in the 2015 file's order.
CURVE = ["--base", "10ms", "--factor", "2", "--cap", "2s", "--max-attempts", "4294967295"]
POLICIES = [
    ("Exponential", ["exponential", *CURVE]),
    ("Decorr", ["aws-2015-decorrelated-clamped"]),
    ("EqualJitter", ["exponential-equal-jitter", *CURVE]),
    ("FullJitter", ["exponential-full-jitter", *CURVE]),
    ("None", ["immediate", "--max-attempts", "4294967295"]),
]


def python_side(ref, clients, rounds):
    start = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            os.path.join(ref, "w1_reference.py"),
            os.path.join(ref, "backoff_simulator_2015.py"),
            str(clients),
            str(rounds),
            "1",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    wall = time.perf_counter() - start
    writes = {}
    for line in out.splitlines():
        name, _, _, w = line.split(",")
        writes[name] = float(w)
    return wall, writes


def stagger_side(clients, rounds):
    writes, inside = {}, 0.0
    start = time.perf_counter()
    for name, policy in POLICIES:
        run = subprocess.run(
            [
                BIN,
                "simulate",
                "--workload",
                "contention",
                "--clients",
                str(clients),
                "--rounds",
                str(rounds),
                "--policy",
                *policy,
                "--stats",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        # The table's columns are the workload's own: find `writes_per_round` by its header.
        rows = [
            [c.strip() for c in l.strip().strip("|").split("|")]
            for l in run.stdout.splitlines()
            if l.startswith("| ") and "---" not in l
        ]
        header, row = rows[0], rows[1]
        writes[name] = float(row[header.index("writes_per_round")])
        found = re.search(r"events in ([0-9.]+) s", run.stderr + run.stdout)
        if not found:
            sys.exit(f"error: no --stats line from stagger's {name} run:\n{run.stderr}")
        inside += float(found.group(1))
    wall = time.perf_counter() - start
    return wall, inside, writes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", help="the folder with backoff_simulator_2015.py and w1_reference.py")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--trials", type=int, default=2)
    args = parser.parse_args()
    for name in ("backoff_simulator_2015.py", "w1_reference.py"):
        if not os.path.isfile(os.path.join(args.reference, name)):
            sys.exit(f"error: {name} is not in {args.reference}")
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "stagger-cli"], cwd=ROOT, check=True
    )
    py, st, inside = [], [], []
    for _ in range(args.trials):
        wall, py_writes = python_side(args.reference, args.clients, args.rounds)
        py.append(wall)
        wall, within, st_writes = stagger_side(args.clients, args.rounds)
        st.append(wall)
        inside.append(within)
    print(f"W1: {args.clients} clients x {args.rounds} rounds, the five published policies")
    print(f"{'policy':<12} {'writes/round (2015 Python)':>27} {'writes/round (stagger)':>23}")
    for name, _ in POLICIES:
        print(f"{name:<12} {py_writes[name]:>27.1f} {st_writes[name]:>23.1f}")
    best_py, best_st, best_in = min(py), min(st), min(inside)
    print(f"2015 Python simulator: {best_py:.3f} s (best of {args.trials}: {', '.join(f'{t:.3f}' for t in py)})")
    print(f"stagger, five processes end to end: {best_st:.3f} s ({', '.join(f'{t:.3f}' for t in st)})")
    print(f"stagger, inside the five runs (--stats): {best_in:.3f} s")
    print(f"ratio end to end: {best_py / best_st:.0f}x; inside the runs: {best_py / best_in:.0f}x")


if __name__ == "__main__":
    main()
