#!/usr/bin/python3
"""Turns the hyperfine results of bench/cli_bench.sh into bench/RESULTS_CLI.md (on stdout).
usage: cli_report.py RESULTS_DIR CORES CPU_NAME
"""

import json
import os
import sys

JOBS = [
    ("startup", "`--version` (start-up)"),
    ("jpeg_half", "1080p JPEG -> JPEG, half size"),
    ("png_half", "1080p PNG -> PNG, half size"),
    ("jpeg4k_224_png", "4K JPEG -> 224x224 PNG"),
    ("png16_half", "1080p 16-bit PNG -> PNG, half size"),
    ("folder_thumbs", "200 photos (1024x768 JPEG) -> 256-px thumbnails, 2 jobs"),
    ("crops64", "64 labelled 224x224 crops from a 4K JPEG"),
]
TOOLS = ["rsz", "vips", "ImageMagick", "Pillow"]


def ms(seconds):
    v = seconds * 1000
    return "%.0f" % v if v >= 100 else "%.1f" % v


def main():
    results, cores, cpu = sys.argv[1], sys.argv[2], sys.argv[3]
    out = ["# rsz end to end against vips, ImageMagick and Pillow", "",
           "Written by `bash bench/cli_bench.sh` on a %s-core %s, all tools in one run on the same files." % (cores, cpu),
           "Each cell is hyperfine's median wall time of the whole command (start-up, decoding, resizing, encoding,",
           "writing), in milliseconds; in brackets the peer's median over rsz's (above 1: rsz is faster).",
           "Filters: rsz linear (DirectML RESAMPLE1), `vips resize --kernel linear`, ImageMagick `-filter Triangle`,",
           "Pillow `BILINEAR`. vipsthumbnail (shrink-on-load: decodes the JPEG at reduced size, so not the same",
           "pixels) is a reference row only, not one of the peers the targets compare against.", "",
           "| job | rsz | vips | ImageMagick | Pillow | vipsthumbnail (reference) | best peer / rsz |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    commands = []
    for job, title in JOBS:
        path = os.path.join(results, job + ".json")
        if not os.path.exists(path):
            continue
        data = {r["command"]: r for r in json.load(open(path))["results"]}
        rsz = data["rsz"]["median"]
        cells = []
        for tool in TOOLS:
            if tool in data:
                med = data[tool]["median"]
                cells.append(ms(med) if tool == "rsz" else "%s (%.2f)" % (ms(med), med / rsz))
            else:
                cells.append("n/a")
        ref = data.get("vipsthumbnail")
        cells.append(ms(ref["median"]) if ref else "")
        best = min(data[t]["median"] for t in ("vips", "ImageMagick") if t in data)
        out.append("| %s | %s | %.2f |" % (title, " | ".join(cells), best / rsz))
        commands.append((job, title))
    rss_path = os.path.join(results, "rss.txt")
    if os.path.exists(rss_path):
        decoded = 3840 * 2160 * 3 / 1024.0
        out += ["", "Peak resident memory of the 4K JPEG -> 224x224 PNG job (`/usr/bin/time`), against the decoded",
                "image (3840 x 2160 x 3 bytes = %.0f KiB):" % decoded, "", "| tool | peak RSS KiB | x decoded image |",
                "| --- | --- | --- |"]
        for line in open(rss_path):
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                out.append("| %s | %s | %.2f |" % (parts[0], parts[1], int(parts[1]) / decoded))
    lines = {}
    tsv = os.path.join(results, "commands.tsv")
    if os.path.exists(tsv):
        for row in open(tsv):
            job, tool, line = row.rstrip("\n").split("\t", 2)
            lines.setdefault(job, []).append((tool, line))
    out += ["", "## Commands", "", "Run in `build-bench/cli`, where `bench/cli_inputs.py` made the inputs from",
            "`samples/photos`; `RSZ` is `build-bench/app/rsz`, `BENCH` is `bench/`.", ""]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(results))))
    for job, title in commands:
        out.append("%s:" % title)
        out.append("")
        for tool, line in lines.get(job, []):
            line = line.replace(root + "/build-bench/app/rsz", "RSZ").replace(root + "/bench", "BENCH")
            line = line.replace(root + "/build-bench/cli/", "")
            out.append("- %s: `%s`" % (tool, line))
        out.append("")
    print("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
