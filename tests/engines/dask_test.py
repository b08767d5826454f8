#!/usr/bin/python3
"""rsz on a real Dask cluster: a distributed.LocalCluster of 2 worker processes x 1 thread, one task per shard of an
rsz plan (4 shards over 200 generated images), each task rsz.run_shard(state, shard, "thumbnail", ...) in the worker's
process. The worker running shard 2 is killed (SIGKILL) after it wrote a few outputs; Dask's scheduler gives the task
to a worker again (the nanny starts a new worker process), the shard resumes, rsz.merge reports every shard done and
the outputs are byte-identical to one rsz process over the same inputs. Every output present right after the kill
must be complete (the bytes of the uninterrupted run); temporaries (.NAME.tmp-*) a kill can leave must go with
rsz.merge(state, clean=True).
The same plan is then run again in a fresh state with each task running the rsz program (rsz thumbnail --plan STATE
--shard I) by subprocess, the other way a Dask job can use rsz, and compared the same way.

usage: dask_test.py RSZ SOURCE_DIR   (the module from PYTHONPATH; exit 77, "skip: ...", without Dask)
"""
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = 77
START = time.monotonic()


def say(text):
    print(f"dask_test: [{time.monotonic() - START:.0f} s] {text}", flush=True)


def fail(text):
    print(f"dask_test: FAIL: {text}", file=sys.stderr, flush=True)
    sys.exit(1)


try:
    import distributed  # noqa: F401  (Debian: python3-distributed)
    import psutil
    from distributed import Client, LocalCluster
except ImportError as e:
    print(f"skip: Dask is not installed ({e}): bash scripts/install-deps.sh installs python3-distributed", flush=True)
    sys.exit(SKIP)
try:
    import rsz
except ImportError as e:
    print(f"skip: the rsz Python module is not built or not on PYTHONPATH ({e})", flush=True)
    sys.exit(SKIP)

THUMB = dict(size=64, output="out/{relpath}{ext}", quiet=True, jobs=1)


def shard_task(work, state, shard, mode, stop_first_attempt):
    """One shard in a worker. With stop_first_attempt, the first attempt stops its own process (SIGSTOP) before it
    starts, so that the test drives it from outside (continue for a few ms at a time, then kill): the kill lands
    mid-way whatever the machine's speed. Returns the shard's done marker."""
    os.chdir(work)
    if stop_first_attempt:
        try:
            fd = os.open(f"attempt-{shard}", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGSTOP)
        except FileExistsError:
            pass  # the retry, on a new worker: run through
    if mode == "run_shard":
        import rsz as module

        return module.run_shard(state, shard, "thumbnail", **THUMB)
    rsz_binary = os.environ["RSZ_BINARY"]
    cmd = [rsz_binary, "thumbnail", "--plan", state, "--shard", str(shard), "--size", str(THUMB["size"]), "-o",
           THUMB["output"], "-q", "-j", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr}")
    import json

    with open(Path(state) / "done" / f"{shard:05d}.json") as f:
        return json.load(f)


def digest_tree(root):
    """{relative path: sha256} of every file below root but temporaries, and the temporaries' names."""
    files, temporaries = {}, []
    for path in sorted(Path(root).rglob("*")):
        if not path.is_file():
            continue
        if path.name.startswith(".") and ".tmp-" in path.name:
            temporaries.append(str(path))
            continue
        files[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files, temporaries


def shard_outputs(work, state, shard):
    """The outputs of a shard's inputs present now (out/ + the input's path below ds/)."""
    lines = (Path(work) / state / "shards" / f"{shard:05d}.txt").read_text().splitlines()
    paths = [Path(work) / "out" / line.split("\t")[0][len("ds/"):] for line in lines]
    return sum(p.is_file() for p in paths), len(paths)


def run_job(client, work, state, mode, kill_shard):
    """Plans, runs the 4 shards on the cluster (the worker of kill_shard killed mid-way), merges; returns the merge
    report and the marker of kill_shard."""
    planned = rsz.plan(["ds"], state, 4, recursive=True)
    if planned.get("total") != 200:
        fail(f"rsz.plan: {planned}")
    futures = [client.submit(shard_task, work, state, i, mode, i == kill_shard, key=f"{state}-shard-{i}", retries=2,
                             pure=False) for i in range(4)]
    if kill_shard is not None:
        attempt = Path(work) / f"attempt-{kill_shard}"
        deadline = time.monotonic() + 60
        while not attempt.is_file() or not attempt.read_text():
            if time.monotonic() > deadline:
                fail(f"shard {kill_shard}'s task did not start in 60 s")
            time.sleep(0.01)
        worker = psutil.Process(int(attempt.read_text()))
        while worker.status() != psutil.STATUS_STOPPED:
            time.sleep(0.005)
        # Continue the stopped worker for 10 ms at a time until the shard has written 3 outputs, then kill it.
        written, total = shard_outputs(work, state, kill_shard)
        # The worker and, in the subprocess mode, its rsz process.
        family = lambda: [worker] + worker.children(recursive=True)  # noqa: E731
        while written < 3:
            if time.monotonic() > deadline:
                fail(f"shard {kill_shard} wrote {written} outputs in 60 s")
            for p in family():
                p.resume()
            time.sleep(0.01)
            for p in family():
                p.suspend()
            time.sleep(0.05)
            written, total = shard_outputs(work, state, kill_shard)
        for p in family():
            p.kill()
        worker.wait(10)
        if written >= total:
            fail(f"shard {kill_shard} finished before its worker was killed")
        # Right after the kill: every output there is complete (a retry, if it already runs, writes whole files too).
        files, temporaries = digest_tree(Path(work) / "out")
        for name, digest in files.items():
            if REFERENCE.get(name) != digest:
                fail(f"out/{name} is not the single-process run's output after the kill (half-written)")
        say(f"{mode}: the worker running shard {kill_shard} (pid {worker.pid}) killed after {written} of {total} "
            f"outputs; {len(files)} outputs present, all complete; {len(temporaries)} temporary file(s) (the kill's, "
            "or the retry's being written)")
    markers = client.gather(futures)
    for i, marker in enumerate(markers):
        if marker.get("status") != 0 or marker.get("failed"):
            fail(f"{mode}: shard {i}'s marker: {marker}")
    report = rsz.merge(state)
    if report.get("done") != 4 or report.get("rerun") or report.get("failed_inputs"):
        fail(f"{mode}: rsz merge: {report}")
    files, temporaries = digest_tree(Path(work) / "out")
    if temporaries:  # what the kill left: rsz.merge(clean=True) removes those untouched for a minute
        for name in temporaries:
            os.utime(name, (time.time() - 120, time.time() - 120))
        rsz.merge(state, clean=True)
        left = digest_tree(Path(work) / "out")[1]
        if left:
            fail(f"{mode}: rsz.merge(clean=True) left {left}")
        say(f"{mode}: rsz.merge(clean=True) removed the {len(temporaries)} temporary file(s) the kill left")
    if files != REFERENCE:
        missing = sorted(set(REFERENCE) - set(files))[:5]
        differ = sorted(n for n in files if REFERENCE.get(n) != files[n])[:5]
        fail(f"{mode}: the outputs differ from the single-process run: missing {missing}, different {differ}")
    return report, markers[kill_shard] if kill_shard is not None else None


def main():
    global REFERENCE
    rsz_binary, source = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    os.environ["RSZ_BINARY"] = rsz_binary
    first_mode = os.environ.get("RSZ_DASK_TEST_MODE", "run_shard")  # subprocess: before rsz.run_shard existed
    if first_mode == "run_shard" and not hasattr(rsz, "run_shard"):
        fail("the rsz module has no run_shard")
    with tempfile.TemporaryDirectory(prefix="rsz-dask-test.") as work:
        os.chdir(work)  # the plan's inputs and the outputs are relative names, as a job's would be
        subprocess.run(["bash", f"{source}/tests/engines/make_dataset.sh", rsz_binary, source, "ds", "200"], cwd=work,
                       check=True)
        subprocess.run([rsz_binary, "thumbnail", "-i", "ds", "-r", "--size", "64", "-o", "ref/{relpath}{ext}", "-q",
                        "-j", "2"], cwd=work, check=True)
        REFERENCE, _ = digest_tree(Path(work) / "ref")
        if len(REFERENCE) != 200:
            fail(f"the single-process run wrote {len(REFERENCE)} files, not 200")
        say("dataset: 200 images and the single-process run's 200 thumbnails")
        # Dask's workers live in a folder of their own (dask-worker-space) below the work folder.
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          local_directory=work, silence_logs=40) as cluster, Client(cluster) as client:
            say(f"LocalCluster up: {len(cluster.workers)} workers x 1 thread, pids "
                f"{sorted(client.run(os.getpid).values())}")
            report, marker = run_job(client, work, "state", first_mode, kill_shard=2)
            if marker.get("kept", 0) < 3:
                fail(f"shard 2's retry kept {marker.get('kept')} outputs of the killed attempt (expected >= 3): "
                     f"{marker}")
            say(f"run_shard: rsz.merge: {report['done']} of {report['shards']} shards done, {report['outputs']} "
                f"outputs; shard 2 resumed keeping {marker['kept']} and writing {marker['written']}; byte-identical")
            # The subprocess way: the rsz program in each task, a fresh state and output folder.
            os.rename(Path(work) / "out", Path(work) / "out.run_shard")
            report, _ = run_job(client, work, "state2", "subprocess", kill_shard=None)
            say(f"subprocess: rsz merge: {report['done']} of {report['shards']} shards done; byte-identical")
    say("PASS")


if __name__ == "__main__":
    main()
