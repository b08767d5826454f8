#!/usr/bin/python3
"""Images per CPU-second of rsz on the engines a dataset job runs on, in one run: one rsz process, a real
single-node Slurm array (scripts/slurm-local.sh) and a Dask LocalCluster, for 256-px thumbnails and ROI crops of the
same N 640x480 JPEGs. Run by bench/engines_bench.sh, which says how; writes bench/RESULTS_ENGINES.md.

CPU is user + system time of every process of the job, measured as follows:
  one process  the rsz process (getrusage of the child).
  Slurm        each array element's batch script reports `times` (its shell and its children: rsz) and its wall
               time; rsz plan and rsz merge are children of this script. "with the engine" adds the CPU that
               slurmctld, slurmd and munged spent during the job (/proc/PID/stat, their reaped children included)
               and the slurmstepd processes' CPU, sampled every 20 ms while they live (the last <= 20 ms of each is
               missed).
  Dask         the worker processes' CPU (psutil) during the job, each task an in-process rsz.run_shard, plus
               rsz.plan and rsz.merge (this process, around the calls). "with the engine" adds this process's
               whole CPU during the job: Dask's scheduler, the nannies and the client live here.
The cluster's and Slurm's start-up are not counted (they are paid once for many jobs); Slurm's scheduling gaps are
in the wall time, which runs from the plan to the merge.
"""
import argparse
import hashlib
import json
import os
import platform
import random
import resource
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
SHARDS = 8


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def proc_cpu(pid, with_children=True):
    """utime + stime (+ cutime + cstime) of a process, seconds; None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    ticks = int(fields[11]) + int(fields[12])
    if with_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICK


def tree_digest(root):
    h = hashlib.sha256()
    n = 0
    for path in sorted(Path(root).rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
            n += 1
    return h.hexdigest(), n


class StepdSampler:
    """CPU of the slurmstepd processes (they are not children of slurmd once started), sampled while they live."""

    def __init__(self):
        self.last = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    if Path(f"/proc/{entry.name}/comm").read_text().strip() != "slurmstepd":
                        continue
                except OSError:
                    continue
                cpu = proc_cpu(entry.name, with_children=False)
                if cpu is not None:
                    self.last[entry.name] = cpu
            self.stop.wait(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def total(self):
        return sum(self.last.values())


def make_coco(ds, path, boxes_per_image, seed=7):
    """A COCO instances file: boxes_per_image boxes of 32 to 320 px on each image of ds (640x480)."""
    rng = random.Random(seed)
    names = ["cat", "dog", "car", "person", "bicycle"]
    images, annotations = [], []
    for i, p in enumerate(sorted(Path(ds).rglob("*.jpg")), start=1):
        images.append({"id": i, "file_name": str(p.relative_to(ds)), "width": 640, "height": 480})
        for _ in range(boxes_per_image):
            w, h = rng.randint(32, 320), rng.randint(32, 320)
            x, y = rng.randint(0, 640 - w), rng.randint(0, 480 - h)
            annotations.append({"id": len(annotations) + 1, "image_id": i, "category_id": rng.randint(1, len(names)),
                                "bbox": [x, y, w, h], "area": w * h, "iscrowd": 0})
    coco = {"images": images, "annotations": annotations,
            "categories": [{"id": k + 1, "name": n} for k, n in enumerate(names)]}
    Path(path).write_text(json.dumps(coco))
    return len(annotations)


def make_dataset(rsz, source, work, n):
    """n 640x480 JPEGs from the sample photos: each photo scaled to cover 640x480 at 14 sizes, then cut to 640x480 at
    9 gravities and written at 4 JPEG qualities (2016 distinct images), the first n kept."""
    base, ds = work / "base", work / "ds"
    for k in range(14):
        w, h = 640 * (10 + k) // 10, 480 * (10 + k) // 10
        sh([rsz, "resample", "-i", f"{source}/samples/photos", "-o", f"{base}/s{k:02d}/{{stem}}.bmp", "--size",
            f"{w}x{h}^", "-q", "--no-sync"])
    for g in ["center", "north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest"]:
        for q in [85, 88, 90, 92]:
            sh([rsz, "resample", "-i", str(base), "-r", "-o", f"{ds}/{{relpath}}_{g}_{q}.jpg", "--size", "640x480",
                "--fit", "cover", "--gravity", g, "--quality", str(q), "-q", "--no-sync", "-j", "2"])
    files = sorted(ds.rglob("*.jpg"))
    if len(files) < n:
        sys.exit(f"engines_bench: only {len(files)} images could be made; give --images {len(files)} or fewer")
    for p in files[n:]:
        p.unlink()
    sh(["rm", "-rf", str(base)])


# The jobs: the arguments of each after the command, and the output folder's name.
def job_args(job, work, out):
    if job == "thumbnails":
        return ["thumbnail", "--size", "256", "-o", f"{out}/{{relpath}}{{ext}}", "-q"]
    return ["roi-align", "--rois", f"{work}/coco.json", "--image-root", f"{work}/ds", "--output-size", "128x128",
            "-o", f"{out}/{{label}}/{{id}}.jpg", "-q"]


def one_process(rsz, work, job, rep):
    out = work / f"one-{job}-{rep}"
    args = job_args(job, work, out)
    cmd = [rsz] + args[:1] + (["-i", f"{work}/ds", "-r"] if job == "thumbnails" else []) + args[1:] + ["-j", "2"]
    cpu0, t0 = children_cpu(), time.monotonic()
    sh(cmd)
    wall, cpu = time.monotonic() - t0, children_cpu() - cpu0
    return {"wall": wall, "cpu": cpu, "cpu_all": cpu, "out": out}


def slurm_array(rsz, work, job, rep, slurm_dir, env):
    out, state, times = (work / f"slurm-{job}-{rep}", work / f"state-slurm-{job}-{rep}",
                         work / f"times-{job}-{rep}")
    times.mkdir()
    args = job_args(job, work, out)
    select = f'--plan {state} --shard "$SLURM_ARRAY_TASK_ID"'  # rsz plan / --plan / rsz merge
    script = work / f"{job}-{rep}.sbatch"
    script.write_text(f"""#!/bin/bash
#SBATCH --job-name=rsz-{job}
#SBATCH --cpus-per-task=1
#SBATCH --output={work}/logs/{job}-{rep}-%a.log
start=$(date +%s.%N)
{rsz} {" ".join(f"'{a}'" for a in args)} {select} -j 1
status=$?
end=$(date +%s.%N)
{{ echo "$status $start $end"; times; }} > {times}/$SLURM_ARRAY_TASK_ID.txt
exit $status
""")
    daemons = {name: int(Path(f"{slurm_dir}/{name}.pid").read_text()) for name in ("slurmctld", "slurmd", "munged")}
    d0 = {n: proc_cpu(p) for n, p in daemons.items()}
    cpu0, t0 = children_cpu(), time.monotonic()
    plan_merge = 0.0
    with StepdSampler() as stepd:
        c = children_cpu()
        sh([rsz, "plan", "-i", f"{work}/ds", "-r", "--shards", str(SHARDS), "-o", str(state), "-q"])
        plan_merge += children_cpu() - c
        job_id = sh(["sbatch", "--parsable", f"--array=0-{SHARDS - 1}", "--chdir", str(work), str(script)], env=env,
                    capture_output=True, text=True).stdout.strip().split(";")[0]
        while subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%i"], env=env, capture_output=True,
                             text=True).stdout.strip():
            time.sleep(0.25)
        c = children_cpu()
        sh([rsz, "merge", str(state)], stdout=subprocess.DEVNULL)
        plan_merge += children_cpu() - c
        wall = time.monotonic() - t0
    clients = children_cpu() - cpu0 - plan_merge  # sbatch and the squeue polls: the engine's
    rsz_cpu, elements = 0.0, 0

    def secs(t):
        m, s = t.rstrip("s").split("m")
        return 60 * float(m) + float(s)

    for f in sorted(times.glob("*.txt")):
        lines = f.read_text().split("\n")
        status = int(lines[0].split()[0])
        if status != 0:
            sys.exit(f"engines_bench: Slurm element {f.stem} of {job} exited {status}")
        for line in lines[1:3]:  # `times`: the batch shell's own CPU, then its children's (rsz)
            u, s = line.split()
            rsz_cpu += secs(u) + secs(s)
        elements += 1
    if elements != SHARDS:
        sys.exit(f"engines_bench: {elements} of {SHARDS} Slurm elements reported")
    parts = {n: proc_cpu(p) - d0[n] for n, p in daemons.items()}
    parts["slurmstepd"] = stepd.total()  # their own CPU: the batch script they reap is counted above
    parts["sbatch and squeue polls"] = clients
    engine = sum(parts.values())
    return {"wall": wall, "cpu": rsz_cpu + plan_merge, "cpu_all": rsz_cpu + plan_merge + engine, "out": out,
            "parts": parts}


def dask_cluster(rsz_mod, rsz, work, job, rep, client, cluster_pids):
    import psutil

    out, state = work / f"dask-{job}-{rep}", work / f"state-dask-{job}-{rep}"
    args = job_args(job, work, out)
    workers = [psutil.Process(p) for p in cluster_pids]

    def worker_cpu():
        total = 0.0
        for w in workers:
            t = w.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        return total

    # The job's flags as keywords: ["--size", "256", "-o", X, "-q"] -> size="256", output=X (run_shard is quiet).
    flags, k = {}, 1
    while k < len(args):
        name = {"-o": "output", "-q": "quiet"}.get(args[k], args[k].lstrip("-").replace("-", "_"))
        if args[k] == "-q":
            k += 1
            continue
        flags[name] = args[k + 1]
        k += 2
    w0, s0, t0 = worker_cpu(), self_cpu(), time.monotonic()
    p0 = self_cpu()
    rsz_mod.plan([f"{work}/ds"], str(state), SHARDS, recursive=True)
    plan_cpu = self_cpu() - p0
    futures = [client.submit(rsz_mod.run_shard, str(state), i, args[0], pure=False, jobs=1, **flags)
               for i in range(SHARDS)]
    markers = client.gather(futures)
    bad = [m for m in markers if m.get("status") != 0]
    p0 = self_cpu()
    report = rsz_mod.merge(str(state))
    plan_cpu += self_cpu() - p0
    if bad or report.get("rerun"):
        sys.exit(f"engines_bench: Dask {job}: {bad or report}")
    wall = time.monotonic() - t0
    wcpu, scpu = worker_cpu() - w0, self_cpu() - s0
    return {"wall": wall, "cpu": wcpu + plan_cpu, "cpu_all": wcpu + scpu, "out": out,
            "parts": {"the client process (scheduler, nannies, client)": scpu - plan_cpu}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rsz", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--boxes", type=int, default=4)
    ap.add_argument("--results", required=True)
    ap.add_argument("--slurm-conf", default="")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    rsz, work = a.rsz, Path(a.work)
    (work / "logs").mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    load0 = Path("/proc/loadavg").read_text().split()[:3]
    print("engines_bench: making the dataset", flush=True)
    make_dataset(rsz, a.source, work, a.images)
    crops = make_coco(work / "ds", work / "coco.json", a.boxes)
    counts = {"thumbnails": a.images, "crops": crops}
    notes = []
    engines = [("one", "one rsz process, -j 2")]
    env = slurm_dir = None
    if a.slurm_conf:
        env = dict(os.environ, SLURM_CONF=a.slurm_conf)
        slurm_dir = str(Path(a.slurm_conf).parent)
        engines.append(("slurm", f"Slurm array, {SHARDS} elements x 1 CPU"))
    else:
        notes.append("Slurm rows left out: the local Slurm could not start (see the skip line above).")
    try:
        import psutil
        import rsz as rsz_mod
        from distributed import Client, LocalCluster
        if hasattr(rsz_mod, "run_shard"):
            engines.append(("dask", "Dask LocalCluster, 2 worker processes x 1 thread, a task per shard"))
        else:
            notes.append("Dask rows left out: this rsz module has no run_shard.")
    except ImportError as e:
        notes.append(f"Dask rows left out: {e}.")
    how = {"slurm": "; rsz plan, --plan STATE --shard I, rsz merge",
           "dask": "; rsz.plan, rsz.run_shard in the worker, rsz.merge"}
    results = {}  # (engine, job) -> [run, ...]
    reference = {}
    cluster = client = None
    try:
        if any(e == "dask" for e, _ in engines):
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                   local_directory=str(work), silence_logs=40)
            client = Client(cluster)
            pids = sorted(client.run(os.getpid).values())
            # What a Dask worker process spends on its own (event loop, heartbeats, memory monitor) while idle.
            idle = [psutil.Process(p) for p in pids]
            i0 = sum(t.user + t.system for t in (w.cpu_times() for w in idle))
            time.sleep(3)
            idle_rate = (sum(t.user + t.system for t in (w.cpu_times() for w in idle)) - i0) / 3 / len(idle)
            trim = sorted(set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_", "unset")).values()))
            notes.append(f"A Dask worker process spends {idle_rate * 1000:.0f} ms of CPU a second when idle (event "
                         "loop, heartbeats, memory monitor); the Dask rows' worker CPU includes that over the job's "
                         f"wall time. The workers ran with MALLOC_TRIM_THRESHOLD_={trim[0]} (Dask sets it for "
                         "its workers).")
        for rep in range(a.repeats):
            for job in ("thumbnails", "crops"):
                for engine, _ in engines:
                    print(f"engines_bench: run {rep + 1} of {a.repeats}: {job}: {engine}", flush=True)
                    if engine == "one":
                        r = one_process(rsz, work, job, rep)
                    elif engine == "slurm":
                        r = slurm_array(rsz, work, job, rep, slurm_dir, env)
                    else:
                        r = dask_cluster(rsz_mod, rsz, work, job, rep, client, pids)
                    digest = tree_digest(r["out"])
                    if engine == "one" and rep == 0:
                        reference[job] = digest
                    r["same"] = digest == reference[job]
                    r["files"] = digest[1]
                    sh(["rm", "-rf", str(r["out"])])
                    results.setdefault((engine, job), []).append(r)
    finally:
        if client is not None:
            client.close()
            cluster.close()

    load1 = Path("/proc/loadavg").read_text().split()[:3]
    lines, parts = [], []
    for job in ("thumbnails", "crops"):
        n = counts[job]
        for engine, label in engines:
            runs = sorted(results[(engine, job)], key=lambda r: r["cpu"])
            r = runs[len(runs) // 2]  # the median run by CPU
            rates = [n / x["cpu"] for x in runs]
            walls = sorted(x["wall"] for x in runs)
            same = "yes" if all(x["same"] for x in runs) else "NO: " + ", ".join(str(x["files"]) for x in runs)
            wall = f"{walls[len(walls) // 2]:.2f} ({walls[0]:.1f}-{walls[-1]:.1f})"
            lines.append(f"| {job} | {label}{how.get(engine, '')} | {n} | {wall} | {r['cpu']:.2f} | "
                         f"**{n / r['cpu']:.0f}** ({min(rates):.0f}-{max(rates):.0f}) | {r['cpu_all']:.2f} | "
                         f"{n / r['cpu_all']:.0f} | {same} |")
            if r.get("parts"):
                parts.append(f"* {job}, {label.split(',')[0]}: " +
                             ", ".join(f"{name} {cpu:.2f} s" for name, cpu in r["parts"].items()))
    git = subprocess.run(["git", "-C", a.source, "log", "-1", "--format=%h %s"], capture_output=True,
                         text=True).stdout.strip()[:90]
    cpu_model = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                      if l.startswith("model name")), platform.machine())
    versions = []
    for cmd in (["slurmctld", "-V"],
                ["/usr/bin/python3", "-c", "import distributed; print('dask', distributed.__version__)"]):
        try:
            versions.append(subprocess.run(cmd, capture_output=True, text=True).stdout.strip())
        except OSError:
            pass
    text = f"""# rsz on the engines: one process, a Slurm array, Dask

Written by `bash bench/engines_bench.sh` (one run, {time.monotonic() - t_start:.0f} s in all) at
{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, rsz at `{git}`.
Machine: {os.cpu_count()} CPUs ({cpu_model}); load average {' '.join(load0)} before, {' '.join(load1)} after
(other work shared the machine: CPU seconds are the measure to compare, wall times move with the load).
{'; '.join(versions)}.

Inputs: {a.images} JPEGs of 640x480 (quality 85-92) made from the sample photos. **thumbnails**: `rsz thumbnail
--size 256` to JPEG, one per image. **crops**: `rsz roi-align` of a generated COCO instances file ({a.boxes} boxes of
32-320 px per image, {crops} crops) at `--output-size 128x128` to JPEG. Every output is fsynced before its rename
(rsz's default). Every engine ran {SHARDS} shards, one CPU each, two at a time (the machine's two cores). Each row
was run {a.repeats} times, the runs of all rows interleaved: the wall time is the median (the range in brackets),
the CPU columns are those of the run of median CPU (the range of items / CPU-s in brackets).

| job | how | items | wall s | rsz CPU s | items / CPU-s | CPU s with the engine | items / CPU-s with it | \
same bytes as one process |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |
""" + "\n".join(lines) + f"""

*rsz CPU*: user + system seconds of the rsz processes (and, for Slurm, of each element's batch shell; for the
planned jobs, `rsz plan` and `rsz merge`). *with the engine*: adds what the engine spent during the job: for Slurm
slurmctld, slurmd, munged, the slurmstepd processes (their own CPU sampled every 20 ms: a lower bound), sbatch, the
squeue polls (every 0.25 s); for Dask the client process, which holds the scheduler and the nannies. Start-up of
Slurm and of the Dask cluster is not counted (paid once for many jobs). Wall: from the plan to the merge, Slurm's
scheduling gaps between waves of elements included.

The engines' CPU during the median run of each row:

""" + "\n".join(parts) + "\n" + "".join(f"\n{textwrap.fill(n, 116)}\n" for n in notes)
    Path(a.results).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
