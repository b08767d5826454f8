#!/usr/bin/env python3
"""Markdown tables for bench/RESULTS_THREADS.md from the $RAW files of bench/threads_device.sh's scaling runs.

usage: threads_report.py BASE NEW RAW.jsonl ...   e.g. threads_report.py omp pool raw_resample.jsonl raw_roi.jsonl

A cell is the median over the rounds of each run's median, with the best run in brackets (as bench/scaling_runs.py
prints them); a ratio is NEW's time over BASE's (above 1: NEW is slower), of the medians and, in parentheses, of the
best runs; bold where both are above 1.05. Then
the geometric means of the ratios per thread count, the rows where NEW is more than 5% slower by both measures, and
the machine's own 1 -> N speed-up (compute_scaling) per label.
"""
import collections
import json
import math
import statistics
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    base, new = sys.argv[1], sys.argv[2]
    times = collections.defaultdict(list)
    machine = collections.defaultdict(list)
    rounds = collections.defaultdict(set)
    for path in sys.argv[3:]:
        for line in open(path):
            d = json.loads(line)
            if "compute_scaling" in d:
                machine[(d["label"], d["threads"])].append(d["compute_scaling"])
            elif d.get("impl") == "rsz" and "median_ms" in d:
                key = (d["workload"], d["variant"], d["dtype"], d["threads"])
                times[(d["label"], *key)].append(d["median_ms"])
                rounds[d["workload"]].add((d["label"], d["round"]))
    rows = sorted({k[1:4] for k in times}, key=lambda k: (k[0], k[2], k[1]))
    counts = sorted({k[4] for k in times})
    head = " | ".join(f"{base} {t} | {new} {t} | ratio {t}" for t in counts)
    print(f"| workload | variant | dtype | {head} |")
    print("| --- | --- | --- |" + " --- | --- | --- |" * len(counts))
    ratios = collections.defaultdict(lambda: ([], []))
    slower = []
    cell = lambda v: f"{statistics.median(v):.3g} [{min(v):.3g}]"
    for row in rows:
        cells = []
        for t in counts:
            b, n = times.get((base, *row, t)), times.get((new, *row, t))
            if not b or not n:
                cells.append("- | - | -")
                continue
            rm, rb = statistics.median(n) / statistics.median(b), min(n) / min(b)
            ratios[t][0].append(rm)
            ratios[t][1].append(rb)
            if rm > 1.05 and rb > 1.05:
                slower.append(((*row, t), statistics.median(b), statistics.median(n), rm, rb))
            mark = "**" if rm > 1.05 and rb > 1.05 else ""
            cells.append(f"{cell(b)} | {cell(n)} | {mark}{rm:.2f} ({rb:.2f}){mark}")
        print(f"| {row[0]} | {row[1]} | {row[2]} | " + " | ".join(cells) + " |")
    print()
    print(f"Geometric mean of {new}/{base} per thread count (medians; best runs), and the range of the medians' ratio:")
    for t in sorted(ratios):
        m, b = ratios[t]
        g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
        print(f"- {t} threads, {len(m)} rows: {g(m):.3f} ({min(m):.2f}-{max(m):.2f}); best runs {g(b):.3f}")
    print()
    print(f"Rows where {new} is more than 5% slower by both the medians and the best runs:")
    for row, b, n, rm, rb in slower:
        print(f"- {' '.join(map(str, row[:3]))}, {row[3]} threads: {b:.3g} -> {n:.3g} ms ({rm:.2f}x; best {rb:.2f}x)")
    print()
    print("Machine's own 1 -> N speed-up (register-only loop), median over runs [min-max]:")
    for label in (base, new):
        cells = [f"{t}: {statistics.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"
                 for (l, t), v in sorted(machine.items()) if l == label and t > 1]
        print(f"- {label}: " + ", ".join(cells))
    print()
    print("Runs per label: " + ", ".join(f"{w} {len(r) // 2}" for w, r in sorted(rounds.items())))


if __name__ == "__main__":
    main()
