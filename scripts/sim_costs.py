#!/usr/bin/env python3
"""The simulator's cost per event on five workloads, for one `stagger` binary or several side by
side (an old build against a new one).

usage: python3 scripts/sim_costs.py [--no-rates] [--herd-clients N] BIN [BIN ...]

For each of herd, outage, open-loop, throttle and tail (full jitter): instructions per event
(callgrind's count for a run less that of a run half as long, over the events between them, so
the process's fixed costs cancel; they do not move with the machine's load), and events per
second at size (the median of 3 runs, the binaries interleaved so that a busy machine slows
them alike), with whether the binaries printed the same bytes. Needs valgrind.
"""
import re, subprocess, sys, tempfile, statistics
J = ["--policy", "exponential-full-jitter", "--max-events", "1e9", "--stats"]
PAIRS = {
 "herd": (["--workload","herd","--clients","100000"], ["--workload","herd","--clients","200000"]),
 "outage": (["--workload","outage","--rate","2000","--duration","60s"], ["--workload","outage","--rate","2000","--duration","120s"]),
 "open-loop": (["--workload","open-loop","--duration","100s"], ["--workload","open-loop","--duration","200s"]),
 "throttle": (["--workload","throttle","--rate","200","--duration","60s"], ["--workload","throttle","--rate","200","--duration","120s"]),
 "tail": (["--workload","tail","--duration","50s"], ["--workload","tail","--duration","100s"]),
}
SIZE = {
 "herd": ["--workload","herd","--clients","1000000"],
 "outage": ["--workload","outage","--rate","10000","--duration","100s"],
 "open-loop": ["--workload","open-loop","--duration","1000s"],
 "throttle": ["--workload","throttle","--rate","1000","--duration","100s"],
 "tail": ["--workload","tail","--duration","1000s"],
}
def run(b, a, cg=False):
    with tempfile.NamedTemporaryFile(suffix=".cg") as f:
        cmd = (["valgrind","--tool=callgrind",f"--callgrind-out-file={f.name}"] if cg else []) + [b,"simulate",*a,*J]
        p = subprocess.run(cmd, capture_output=True, text=True, check=True)
        o = p.stdout + p.stderr
        ev = int(re.search(r"measured: (\d+) events", o).group(1))
        rate = int(re.search(r"\((\d+) events/s\)", o).group(1))
        ins = int(re.search(r"^summary: (\d+)", open(f.name).read(), re.M).group(1)) if cg else None
        return ev, rate, ins, hash(p.stdout)
argv = sys.argv[1:]
RATES = '--no-rates' not in argv
if '--herd-clients' in argv:
    # The herd at size: a million clients run in 0.3 s, short enough for a busy machine's
    # noise to move it; ten million take about 2.5 s.
    i = argv.index('--herd-clients')
    SIZE["herd"] = ["--workload", "herd", "--clients", argv[i + 1]]
    del argv[i:i + 2]
bins = [b for b in argv if b != '--no-rates']
for w in PAIRS:
    row = [w]
    for b in bins:
        (e0,_,i0,_), (e1,_,i1,_) = run(b, PAIRS[w][0], True), run(b, PAIRS[w][1], True)
        row.append(f"{(i1-i0)/(e1-e0):.0f} instr/event")
    rates = {b: [] for b in bins}; outs = {}
    for _ in range(3 if RATES else 0):
        for b in bins:
            ev, r, _, h = run(b, SIZE[w]); rates[b].append(r); outs.setdefault(b, (ev, h))
    for b in bins if RATES else []:
        row.append(f"{statistics.median(rates[b])/1e6:.1f} M ev/s ({outs[b][0]} events)")
    if len(bins) > 1 and RATES:
        row.append("same output" if len({outs[b] for b in bins}) == 1 else "OUTPUT DIFFERS")
    print(" | ".join(row), flush=True)
