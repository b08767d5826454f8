#!/usr/bin/env python3
"""rsz_bench runs in turns, for thread scaling on a shared machine (bench/RESULTS_SCALING.md).

usage: scaling_runs.py ROUNDS THREADS ONLY LABEL=BINARY[:ENV=VALUE,ENV=VALUE] ...
  e.g. scaling_runs.py 6 1,4,16 roi_1 before=/tmp/a/bench/rsz_bench after=build/bench/rsz_bench:RSZ_CPU_BASELINE=1

Each round runs every configuration once (in reverse order every other round, so that a slow spell of the machine
hits them alike), each run timing every thread count of THREADS in one process on the workloads whose name has ONLY
(bench/workloads.json, or $WORKLOADS; --quick). A cell is the median over the rounds, with the best run in brackets.
Beside rsz's own 1 -> N speed-ups it prints the machine's (rsz_bench's register-only loop, measured at the start of
every run): on a virtual machine whose cores are shared, that ceiling moves from call to call, and it says how much
of a kernel's scaling the machine left it. $RAW names a file that collects every JSON line with its round and label.
"""
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, threads, only = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    workloads = os.environ.get("WORKLOADS", os.path.join(os.path.dirname(__file__), "workloads.json"))
    configs = []
    for arg in sys.argv[4:]:
        label, rest = arg.split("=", 1)
        binary, *settings = rest.split(":")
        env = dict(os.environ)
        for setting in ",".join(settings).split(","):
            if setting:
                key, value = setting.split("=", 1)
                env[key] = value
        configs.append((label, binary, env))
    times = collections.defaultdict(list)     # (label, workload, variant, dtype, threads) -> ms per round
    machine = collections.defaultdict(list)   # (label, threads) -> the machine's 1 -> threads speed-up per round
    raw = open(os.environ["RAW"], "a") if os.environ.get("RAW") else None
    out_dir = tempfile.TemporaryDirectory(prefix="rsz-scaling-")  # the generated ROI boxes; removed at the end
    for r in range(rounds):
        for label, binary, env in configs if r % 2 == 0 else configs[::-1]:
            out = subprocess.run([binary, workloads, out_dir.name, "--quick", "--only", only, "--threads", threads],
                                 env=env, capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                d = json.loads(line)
                if raw:
                    raw.write(json.dumps({"round": r, "label": label, **d}) + "\n")
                if "compute_scaling" in d:
                    machine[(label, d["threads"])].append(d["compute_scaling"])
                elif d.get("impl") == "rsz" and "median_ms" in d:
                    times[(label, d["workload"], d["variant"], d["dtype"], d["threads"])].append(
                        d["median_ms"])
        print(f"round {r + 1} of {rounds} done", file=sys.stderr, flush=True)
    labels = [c[0] for c in configs]
    counts = sorted({k[4] for k in times})
    rows = sorted({k[1:4] for k in times}, key=lambda k: (k[0], k[2], k[1]))
    print("ms, median over rounds [best]:", " | ".join(labels))
    for row in rows:
        for t in counts:
            cells = [f"{statistics.median(v):7.2f} [{min(v):6.2f}]" if (v := times.get((l, *row, t))) else "-"
                     for l in labels]
            print(f"{row[0]} {row[1]} {row[2]} {t:>3} | " + " | ".join(cells))
    if len(counts) < 2:
        return
    print("speed-up from 1 thread (medians), and the machine's own (register-only loop, median over rounds):")
    for l in labels:
        ceiling = " ".join(f"{t}: {statistics.median(machine[(l, t)]):5.2f}" for t in counts[1:] if machine[(l, t)])
        print(f"  {l}: machine {ceiling}")
    for row in rows:
        cells = []
        for l in labels:
            one = times.get((l, *row, 1))
            cells.append(" ".join(f"{t}: {statistics.median(one) / statistics.median(v):5.2f}"
                                  for t in counts[1:] if one and (v := times.get((l, *row, t)))))
        print(f"{row[0]} {row[1]} {row[2]} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
