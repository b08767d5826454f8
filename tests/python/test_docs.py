"""The examples of the README and of the manual in docs/ that are more than `rsz` command lines, run as written.

The `rsz ...` lines of every code block run in tests/cli/cli_test.cpp (Cli.ReadmeExamplesRun and
Cli.ReadmeManualExamplesRun). A block that needs more is marked by `<!-- example: NAME -->` on the line before its
fence (docs/DEVELOPMENT.md, "How the docs' examples are tested"): the Python blocks and the Kubernetes, GNU parallel
and Dask recipes of docs/SCALE.md run here; the Slurm recipe (slurm-steps, slurm-script) runs on a real Slurm in
tests/engines/slurm_test.sh. Each runs in a scratch folder that sees the samples, and its outputs are compared with
those of one rsz command line.

Run by ctest (python.pytest) with PYTHONPATH=build/python, RSZ_BINARY (the CLI) and RSZ_SOURCE_DIR set.
"""

import collections
import glob
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import rsz
from test_rsz import _tree_bytes as tree_bytes  # one helper for both files

SOURCE = os.path.abspath(os.environ.get("RSZ_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
BINARY = os.environ.get("RSZ_BINARY", "rsz")
PHOTO = os.path.join(SOURCE, "samples", "photos", "chelsea.png")

# The marked blocks and the tests that run them. A block marked with a name that is in neither set fails
# test_every_marked_block_has_a_test, as does a Python block without a mark.
RUN_HERE = {"python-front", "python-tour", "python-jobs", "dask-cluster", "dask-bag", "kubernetes-plan", "kubernetes",
            "parallel"}
RUN_BY_SLURM_TEST = {"slurm-steps", "slurm-script"}  # tests/engines/slurm_test.sh

Block = collections.namedtuple("Block", "file lang name text")
MARK = re.compile(r"<!-- example: ([\w-]+) -->")


def doc_files():
    return [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md")))


def doc_blocks():
    """Every fenced code block of the README and docs/*.md: its file, language, mark (None without) and text."""
    blocks = []
    for path in doc_files():
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        previous = ""
        i = 0
        while i < len(lines):
            if lines[i].startswith("```"):
                end = i + 1
                while end < len(lines) and not lines[end].startswith("```"):
                    end += 1
                mark = MARK.fullmatch(previous.strip())
                blocks.append(Block(os.path.relpath(path, SOURCE), lines[i][3:].strip(), mark and mark.group(1),
                                    "\n".join(lines[i + 1:end]) + "\n"))
                previous = ""
                i = end + 1
                continue
            previous = lines[i]
            i += 1
    return blocks


def example(name):
    """The one block marked `name`."""
    found = [b for b in doc_blocks() if b.name == name]
    assert len(found) == 1, "%d blocks are marked <!-- example: %s --> in README.md and docs/" % (len(found), name)
    return found[0]




def cli(*args, cwd=None):
    done = subprocess.run([BINARY, *args], capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, done.stderr


def shell_env():
    """The environment with the built rsz first on PATH, as the docs assume."""
    env = dict(os.environ)
    if os.path.dirname(BINARY):
        env["PATH"] = os.path.dirname(os.path.abspath(BINARY)) + os.pathsep + env.get("PATH", "")
    return env


def run_shell(text, cwd, env=None):
    """Runs a shell block as written, line after line, stopping at the first failure."""
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=cwd, env=env or shell_env(),
                          capture_output=True, text=True)
    assert done.returncode == 0, "this example failed (exit %d):\n%s\n%s" % (done.returncode, text, done.stderr)
    return done


def scratch_with_samples(tmp_path, monkeypatch):
    (tmp_path / "samples").symlink_to(os.path.join(SOURCE, "samples"))
    monkeypatch.chdir(tmp_path)


# ---- every example has its test ----

def test_every_marked_block_has_a_test():
    blocks = doc_blocks()
    names = [b.name for b in blocks if b.name]
    unknown = sorted(set(names) - RUN_HERE - RUN_BY_SLURM_TEST)
    assert not unknown, "marked blocks that no test runs: %s (add them to tests/python/test_docs.py)" % unknown
    missing = sorted((RUN_HERE | RUN_BY_SLURM_TEST) - set(names))
    assert not missing, "examples the tests run are no longer marked in README.md or docs/: %s" % missing
    twice = sorted(n for n, k in collections.Counter(names).items() if k > 1)
    assert not twice, "examples marked twice: %s" % twice
    unmarked = [(b.file, b.text.split("\n", 1)[0]) for b in blocks if b.lang == "python" and not b.name]
    assert not unmarked, "Python blocks that no test runs (mark them <!-- example: NAME -->): %s" % unmarked


# ---- the Python examples ----

def test_front_page_python_example_runs(tmp_path, monkeypatch):
    """The README's Python recipe, as written."""
    block = example("python-front")
    assert block.file == "README.md" and block.lang == "python"
    scratch_with_samples(tmp_path, monkeypatch)
    scope = {"__name__": "__main__"}
    exec(compile(block.text, block.file, "exec"), scope)
    assert scope["image"].shape == (1, 3, 300, 451) and scope["image"].dtype == np.float32
    assert rsz.read_image(tmp_path / "chelsea_160.png").shape == (1, 3, 106, 160)
    assert scope["crops"].shape == (1, 3, 64, 64)


def test_readme_example_runs(tmp_path, monkeypatch):
    """docs/PYTHON.md's tour of the module (once the README's Python example), as written."""
    pytest.importorskip("torch")
    block = example("python-tour")
    scratch_with_samples(tmp_path, monkeypatch)
    scope = {}
    exec(compile(block.text, block.file, "exec"), scope)
    assert scope["half"].shape == (1, 3, 240, 320)
    assert scope["up"].shape == (1, 3, 960, 1280)
    assert tuple(scope["crops"].shape) == (1, 3, 7, 7)
    assert scope["half"].dtype == np.float32 and scope["crops"].dtype == pytest.importorskip("torch").float32
    assert tuple(scope["per_image"].shape) == (2, 3, 7, 7)
    assert np.array_equal(rsz.read_image(tmp_path / "copy.png", dtype="uint"), rsz.read_image(PHOTO, dtype="uint"))
    assert rsz.read_image(tmp_path / "small.png").shape == (1, 3, 150, 225)
    assert scope["square"].shape == (1, 3, 224, 224)
    assert scope["thumb"].shape == (1, 3, 106, 160)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Debian's tornado under distributed
def test_readme_sharding_examples_run(tmp_path, monkeypatch, capsys):
    """docs/PYTHON.md's in-process sharding example and docs/SCALE.md's Dask cluster example (where
    python3-distributed is installed), as written: every shard done, the outputs those of one command line run."""
    block = example("python-jobs")
    scratch_with_samples(tmp_path, monkeypatch)
    scope = {"__name__": "__main__"}
    exec(compile(block.text, block.file, "exec"), scope)
    cli("thumbnail", "-i", "samples/photos", "--size", "64", "-o", "whole/{relpath}{ext}", "-q")
    assert tree_bytes(tmp_path / "py_thumbs") == tree_bytes(tmp_path / "whole")
    assert scope["records"][0]["output"] == "py_mapped/photos/rocket.jpg"
    assert scope["report"].written == 4 and scope["report"].outputs[0] == "py_run/camera.png"
    printed = capsys.readouterr().out.splitlines()
    assert "4 py_run/camera.png" in printed and "io py_missing.jpg 1" in printed
    assert "[1, 1, 24, 24]" in printed
    cli("thumbnail", "-i", "samples/photos", "--size", "24", "-o", "small/", "-q")
    assert tree_bytes(tmp_path / "py_small") == tree_bytes(tmp_path / "small")
    pytest.importorskip("distributed", reason="python3-distributed is not installed: the Dask example")
    block = example("dask-cluster")
    exec(compile(block.text, block.file, "exec"), {"__name__": "__main__"})
    assert tree_bytes(tmp_path / "dask_thumbs") == tree_bytes(tmp_path / "whole")
    assert rsz.merge("dask_state")["rerun"] == ""


def test_dask_bag_example_runs(tmp_path, monkeypatch):
    """docs/SCALE.md's dask.bag example, as written (dask's default scheduler for bags: worker processes), and the
    reason it binds rsz's keywords with functools.partial: map_partitions(rsz.map_paths, ..., output=...) fails."""
    bag = pytest.importorskip("dask.bag", reason="dask is not installed: the dask.bag example")
    block = example("dask-bag")
    assert "import dask.bag" in block.text and "functools.partial(rsz.map_paths" in block.text
    scratch_with_samples(tmp_path, monkeypatch)
    scope = {"__name__": "__main__"}
    exec(compile(block.text, block.file, "exec"), scope)
    records = scope["records"]
    assert len(records) == 4 and all("error" not in r for r in records), records
    cli("thumbnail", "-i", "samples/photos", "-r", "--size", "256", "-o", "whole/{relpath}{ext}", "-q")
    assert tree_bytes(tmp_path / "bag_thumbs") == tree_bytes(tmp_path / "whole")
    # The form the docs warn against: map_partitions hands output= to dask's blockwise, which has its own `output`.
    with pytest.raises(TypeError, match="output"):
        bag.from_sequence(scope["paths"], npartitions=2).map_partitions(
            rsz.map_paths, "thumbnail", root="samples/photos", size=256, output="naive/{relpath}{ext}")


def test_shell_lines_that_start_python_run():
    """`PYTHONPATH=build/python /usr/bin/python3 -c ...` lines of shell blocks, with the module that was built."""
    lines = [line for b in doc_blocks() if b.lang == "sh" for line in b.text.split("\n")
             if line.startswith("PYTHONPATH=build/python ")]
    assert lines, "docs/PYTHON.md shows how to import the module from the build tree"
    env = dict(os.environ)
    for line in lines:
        command = line[len("PYTHONPATH=build/python "):]
        done = subprocess.run(["bash", "-c", command], cwd=SOURCE, env=env, capture_output=True, text=True)
        assert done.returncode == 0, "%s\n%s" % (line, done.stderr)
        if "rsz.__version__" in command:
            assert done.stdout.strip() == rsz.__version__


# ---- webdataset shards (docs/DATASETS.md) ----

def test_webdataset_listing_is_what_the_docs_say(tmp_path):
    """docs/DATASETS.md's `.tar` example and the member list its python3 -c line prints."""
    block = next(b for b in doc_blocks() if b.file == os.path.join("docs", "DATASETS.md") and "{part}.tar" in b.text)
    shutil.copytree(os.path.join(SOURCE, "samples"), tmp_path / "samples")
    run_shell(block.text, tmp_path)
    with open(os.path.join(SOURCE, "docs", "DATASETS.md"), encoding="utf-8") as f:
        text = f.read()
    found = re.search(r"`(python3 -c \"import tarfile;[^`]*)` lists\s+`([^`]*)`", text)
    assert found, "docs/DATASETS.md no longer shows how to list a part's members"
    done = run_shell(found.group(1), tmp_path)
    assert done.stdout.strip() == found.group(2)


# ---- past one machine (docs/SCALE.md): Kubernetes, GNU parallel ----

def photos_folder(tmp_path):
    """photos/: the sample photos, where the recipes expect the images."""
    shutil.copytree(os.path.join(SOURCE, "samples", "photos"), tmp_path / "photos")
    cli("thumbnail", "-i", "photos", "-r", "--size", "256", "-o", "whole/{relpath}{ext}", "-q", cwd=tmp_path)


def test_kubernetes_example_runs(tmp_path):
    """docs/SCALE.md's Indexed Job: the plan as written, then each index's container command as written, in a folder
    standing for the volume at its workingDir (no cluster here), JOB_COMPLETION_INDEX set as Kubernetes sets it."""
    yaml = pytest.importorskip("yaml", reason="python3-yaml is not installed: the Kubernetes example")
    photos_folder(tmp_path)
    run_shell(example("kubernetes-plan").text, tmp_path)
    block = example("kubernetes")
    assert block.lang == "yaml"
    job = yaml.safe_load(block.text)
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    with open(tmp_path / "state" / "plan.json", encoding="utf-8") as f:
        shards = json.load(f)["shards"]
    assert job["spec"]["completions"] == shards, "completions must be the plan's number of shards"
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["workingDir"] == container["volumeMounts"][0]["mountPath"]
    for index in range(job["spec"]["completions"]):
        env = shell_env()
        env["JOB_COMPLETION_INDEX"] = str(index)
        done = subprocess.run(container["command"], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, "index %d: %s" % (index, done.stderr)
    assert rsz.merge(str(tmp_path / "state"))["rerun"] == ""
    assert tree_bytes(tmp_path / "thumbs") == tree_bytes(tmp_path / "whole")


def test_gnu_parallel_example_runs(tmp_path):
    """docs/SCALE.md's GNU parallel recipe, as written (bash scripts/install-deps.sh installs parallel)."""
    if shutil.which("parallel") is None:
        pytest.skip("GNU parallel is not installed: the GNU parallel example")
    photos_folder(tmp_path)
    block = example("parallel")
    run_shell(block.text, tmp_path)
    assert tree_bytes(tmp_path / "thumbs") == tree_bytes(tmp_path / "whole")
