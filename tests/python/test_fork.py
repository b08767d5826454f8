"""rsz in processes forked after their parent used it: torch's DataLoader workers (the fork start method, Linux's
default), and plain os.fork. Each runs in a subprocess with a time limit, so that a hang fails the test instead of
stopping the suite."""
import os
import subprocess
import sys
import textwrap

import pytest

DATALOADER = textwrap.dedent("""
    import numpy as np
    import torch
    import rsz

    class Photos(torch.utils.data.Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, i):
            x = np.random.default_rng(i).uniform(0, 1, (1, 3, 240, 320)).astype(np.float32)
            return torch.from_numpy(rsz.resample(x, scales=0.5, threads=2))

    # The parent's sanity check runs on several threads first: its workers exist when the loader forks.
    want = [rsz.resample(np.random.default_rng(i).uniform(0, 1, (1, 3, 240, 320)).astype(np.float32), scales=0.5,
                         threads=1) for i in range(16)]
    loader = torch.utils.data.DataLoader(Photos(), batch_size=4, num_workers=2,
                                         multiprocessing_context="fork")
    got = [t for batch in loader for t in batch]
    assert len(got) == 16
    for g, w in zip(got, want):
        assert np.array_equal(g.numpy(), w)
    print("ok")
""")

FORK = textwrap.dedent("""
    import os
    import numpy as np
    import rsz

    x = np.random.default_rng(1).uniform(0, 1, (2, 3, 300, 200)).astype(np.float32)
    want = rsz.resample(x, scales=0.37, threads=4)
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            same = np.array_equal(rsz.resample(x, scales=0.37, threads=4), want)
            os._exit(0 if same else 3)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    print("ok")
""")


def run_script(script):
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)  # as a user runs it
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("a process forked after its parent used rsz hung")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


def test_a_dataloader_with_workers_over_rsz_finishes():
    pytest.importorskip("torch")
    run_script(DATALOADER)


def test_a_child_forked_after_a_threaded_call_runs_threaded():
    run_script(FORK)
