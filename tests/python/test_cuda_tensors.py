"""CUDA tensors in and out of the array functions: torch CUDA tensors are read and written in device memory (no copy
to the host), on the tensor's device and torch's current stream, with the CPU backend's bits. Skipped where torch has
no CUDA device or rsz was built without its CUDA backend (scripts/test-cuda.sh runs these on a GPU machine)."""
import numpy as np
import pytest

import rsz

torch = pytest.importorskip("torch")


def _cuda_ready():
    if not torch.cuda.is_available():
        return "torch has no CUDA device"
    for b in rsz.backends():
        if b["name"] == "cuda":
            return "" if b["available"] else "rsz's CUDA backend: " + b["note"]
    return "this rsz was built without its CUDA backend"


pytestmark = pytest.mark.skipif(bool(_cuda_ready()), reason=_cuda_ready() or "ready")


def photo(seed=3, h=270, w=480):
    """A photo-like uint8 image (1, 3, h, w), channels interleaved in memory as decoders give them."""
    generator = torch.Generator().manual_seed(seed)
    hwc = torch.randint(0, 256, (h, w, 3), generator=generator, dtype=torch.uint8)
    return hwc.permute(2, 0, 1)[None]


def same_bits(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    assert np.array_equal(a.cpu().numpy().view(np.uint8), b.cpu().numpy().view(np.uint8))


def test_resample_reads_and_writes_device_memory_with_the_cpu_bits():
    image = photo()
    for dtype in (torch.float32, torch.float16):
        host = image.to(dtype) / 255
        x = host.cuda()
        got = rsz.resample(x, sizes=(224, 224), antialias=True)
        assert got.device == x.device and got.dtype == dtype
        same_bits(got, rsz.resample(host, sizes=(224, 224), antialias=True))
        up = rsz.resample(x, scales=(1.7, 2.3), mode="nearest")
        same_bits(up, rsz.resample(host, scales=(1.7, 2.3), mode="nearest"))
    # uint8 samples (channels interleaved: strided) to float32, on the device.
    got = rsz.resample(image.cuda(), sizes=(100, 150), antialias=True)
    assert got.dtype == torch.float32 and got.is_cuda
    same_bits(got, rsz.resample(image, sizes=(100, 150), antialias=True))


def test_upsample2d_on_the_device():
    x = torch.rand(2, 3, 17, 23)
    for mode in ("nearest", "linear"):
        got = rsz.upsample2d(x.cuda(), (2, 3), mode=mode)
        assert got.is_cuda
        same_bits(got, rsz.upsample2d(x, (2, 3), mode=mode))


def test_out_on_the_device_is_written_in_place():
    x = torch.rand(1, 2, 40, 30)
    out = torch.full((1, 2, 20, 15), 7.0, device="cuda")
    got = rsz.resample(x.cuda(), out=out, antialias=True)
    assert got is out
    same_bits(out, rsz.resample(x, sizes=(20, 15), antialias=True))
    with pytest.raises(ValueError) as caught:
        rsz.resample(x.cuda(), out=torch.empty(1, 2, 20, 15))
    assert str(caught.value) == ("resample: x is a CUDA tensor and out is a Tensor in host memory; give out on x's "
                                 "device (cuda:0)")
    with pytest.raises(ValueError) as caught:
        rsz.resample(x.cuda(), scales=2, backend="cpu")
    assert str(caught.value) == ("backend = \"cpu\" reads host memory, and the tensors are on cuda:0; backend \"cuda\" "
                                 "or \"auto\" is allowed with CUDA tensors")


def test_roi_align_on_the_device_in_every_box_form():
    x = torch.rand(2, 3, 64, 80)
    table = torch.tensor([[0, 1.5, 2.0, 40.0, 30.5], [1, -5.0, 10.0, 70.0, 90.0], [1, 3.0, 3.0, 3.5, 9.0]])
    want = rsz.roi_align(x, table, output_size=(7, 5), sampling_ratio=2)
    for rois in (table.cuda(), table):  # device boxes, and host boxes copied to the device
        got = rsz.roi_align(x.cuda(), rois, output_size=(7, 5), sampling_ratio=2)
        assert got.is_cuda
        same_bits(got, want)
    per_image = [table[:1, 1:].cuda(), table[1:, 1:].cuda()]
    same_bits(rsz.roi_align(x.cuda(), per_image, output_size=(7, 5), sampling_ratio=2), want)
    same_bits(rsz.roi_align(x.cuda(), table[:, 1:].cuda(), table[:, 0].long().cuda(), output_size=(7, 5),
                            sampling_ratio=2), want)
    # A batch index past the batch: the device's check gives the host check's message, and nothing is returned.
    bad = table.clone()
    bad[2, 0] = 2
    with pytest.raises(ValueError) as host:
        rsz.roi_align(x, bad, output_size=3)
    with pytest.raises(ValueError) as device:
        rsz.roi_align(x.cuda(), bad.cuda(), output_size=3)
    assert str(device.value) == str(host.value)


def test_calls_follow_torchs_current_stream():
    side = torch.cuda.Stream()
    host = torch.rand(1, 3, 512, 512)
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)  # the stream busy: a call queued elsewhere would read x before it is written
        x = host.cuda(non_blocking=False) * 2
        got = rsz.resample(x, sizes=(100, 100), antialias=True)
    side.synchronize()
    same_bits(got, rsz.resample(host * 2, sizes=(100, 100), antialias=True))


def test_device_tensors_mixed_with_host_memory_are_refused():
    x = torch.rand(1, 1, 8, 8)
    with pytest.raises(ValueError) as caught:
        rsz.resize(x.cuda(), 4)
    assert "a CPU tensor is needed here (.cpu()); resample, upsample2d and roi_align take CUDA tensors" in str(
        caught.value)
    with pytest.raises(ValueError) as caught:
        rsz.resample(x.cuda().requires_grad_(), scales=2)
    assert str(caught.value) == "resample: x requires grad; rsz computes no gradients: pass x.detach()"


def test_roi_align_box_forms_on_the_device_read_as_the_host_reads_them():
    x = torch.rand(2, 3, 32, 40)
    boxes = torch.tensor([[1.0, 2.0, 20.0, 25.0], [3.25, 4.5, 30.75, 19.5]])
    want = rsz.roi_align(x, boxes, [0, 1], output_size=4)
    # Batch indices of every integer type, int8 included (compared in a type that holds 2^31 - 1).
    for dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.float32):
        got = rsz.roi_align(x.cuda(), boxes.cuda(), torch.tensor([0, 1], dtype=dtype).cuda(), output_size=4)
        same_bits(got, want)
    # Per-image boxes of different types: promoted as numpy promotes them, not cut to the first image's type.
    per_image = [torch.tensor([[1, 2, 20, 25]]).cuda(), boxes[1:].cuda()]
    same_bits(rsz.roi_align(x.cuda(), per_image, output_size=4), want)
    # An image without boxes given as an empty list, and a list of single boxes.
    same_bits(rsz.roi_align(x.cuda(), [boxes.cuda(), []], output_size=4),
              rsz.roi_align(x, [boxes, []], output_size=4))
    same_bits(rsz.roi_align(x.cuda(), [boxes[0].cuda(), boxes[1].cuda()], output_size=4),
              rsz.roi_align(x, boxes, output_size=4))
    empty = rsz.roi_align(x.cuda(), [], output_size=4)
    assert empty.is_cuda and tuple(empty.shape) == (0, 3, 4, 4)
    with pytest.raises(rsz.DTypeError) as caught:
        rsz.roi_align(x.cuda(), boxes.cuda().bfloat16(), output_size=4)
    assert str(caught.value) == ("roi_align: rois has dtype torch.bfloat16; float or integer coordinates are "
                                 "allowed")


def test_a_refused_call_leaves_out_untouched():
    out = torch.full((1, 1, 4, 4), 5.0, device="cuda")
    with pytest.raises(ValueError):
        rsz.resize(torch.rand(1, 1, 8, 8).cuda(), (4, 4), fit="contain", out=out)
    with pytest.raises(ValueError):
        rsz.resample(torch.rand(1, 1, 8, 8).cuda(), out=out, backend="cpu")
    assert bool((out == 5.0).all())



def test_a_decode_gpu_job_keeps_its_stage_for_the_next_and_release_lets_it_go(tmp_path, monkeypatch, capfd):
    rsz.release_gpu()
    probe = tmp_path / "probe.jpg"
    rsz.write_image(str(probe), photo(9, 32, 48).numpy())
    try:
        report = rsz.run("resample", str(probe), str(tmp_path / "probe_out.jpg"), size="16x16", backend="cuda",
                         decode="gpu", check=False)
    except rsz.CommandError as e:  # a build without nvJPEG
        pytest.skip(str(e))
    assert report.status == 0, report.messages
    monkeypatch.setenv("RSZ_GPU_STATS", "1")  # a stage prints what it did when it ends
    try:
        assert rsz.release_gpu() == 1  # the probe's job kept its stage
        assert rsz.release_gpu() == 0
        assert "rsz: GPU stage, jobs: 1," in capfd.readouterr().err
        photos = tmp_path / "photos"
        photos.mkdir()
        for i in range(5):
            rsz.write_image(str(photos / ("p%d.jpg" % i)), photo(10 + i).numpy(), quality=90)
        outputs = []
        for run in range(3):  # the stage made, then taken from the keeper by a run of words and by a request
            out = tmp_path / ("out%d" % run)
            if run == 1:
                report = rsz.run("resample", str(photos), str(out) + "/", "--size", "96x64", "--antialias",
                                 backend="cuda", decode="gpu")
            else:
                report = rsz.run("resample", str(photos), str(out) + "/", size="96x64", antialias=True,
                                 backend="cuda", decode="gpu")
            assert report.status == 0 and len(report.outputs) == 5
            outputs.append([(out / ("p%d.jpg" % i)).read_bytes() for i in range(5)])
        assert outputs[0] == outputs[1] == outputs[2]  # the same bytes from the kept stage
        assert rsz.release_gpu() == 1
        said = capfd.readouterr().err
        # One stage made, and it decoded all 15 files of the three runs (none went to the CPU).
        assert said.count("rsz: GPU stage made") == 1, said
        assert "rsz: GPU stage, lane 0 (GPU 0): " in said and ", 15 files, " in said, said
        assert "rsz: GPU stage, jobs: 15," in said, said
    finally:
        rsz.release_gpu()


def test_a_decode_gpu_job_on_every_gpu_keeps_one_stage_for_that_list(tmp_path, monkeypatch, capfd):
    """device="all" (or a list) puts a lane of the GPU stage on each GPU (the later ones join it once made); the stage
    is kept for the next runs on the same GPUs, in any order, and the outputs are the one-GPU job's bytes."""
    rsz.release_gpu()
    photos = tmp_path / "photos"
    photos.mkdir()
    for i in range(6):
        rsz.write_image(str(photos / ("p%d.jpg" % i)), photo(20 + i).numpy(), quality=90)
    try:
        one = rsz.run("resample", str(photos), str(tmp_path / "one") + "/", size="64x48", backend="cuda",
                      decode="gpu", device=0, check=False)
    except rsz.CommandError as e:  # a build without nvJPEG
        pytest.skip(str(e))
    assert one.status == 0, one.messages
    monkeypatch.setenv("RSZ_GPU_STATS", "1")
    try:
        rsz.release_gpu()
        capfd.readouterr()
        every = list(range(torch.cuda.device_count()))
        for run, device in enumerate(["all", every, every[::-1]]):
            report = rsz.run("resample", str(photos), str(tmp_path / ("all%d" % run)) + "/", size="64x48",
                             backend="cuda", decode="gpu", device=device)
            assert report.status == 0 and len(report.outputs) == 6
            for i in range(6):
                name = "p%d.jpg" % i
                assert (tmp_path / ("all%d" % run) / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
        # "all" and the list of every GPU in any order are one stage, its later GPUs joined (a run ends once they
        # have)
        assert rsz.release_gpu() == 1
        said = capfd.readouterr().err
        assert said.count("rsz: GPU stage made") == 1, said
        for d in every:
            assert "(GPU %d): " % d in said, said
        for d in every[1:]:
            assert "(GPU %d) joined" % d in said, said
    finally:
        rsz.release_gpu()


def test_a_backend_cuda_job_batches_cpu_decoded_pixels_in_a_stage_of_its_own(tmp_path, monkeypatch, capfd):
    """backend="cuda" without decode="gpu": each image is decoded on the CPU and its pixels go to a GPU stage made
    without JPEG decoders, kept for the next such runs and apart from decode="gpu"'s stage; the outputs are the CPU
    job's bytes."""
    rsz.release_gpu()
    photos = tmp_path / "photos"
    photos.mkdir()
    for i in range(5):
        rsz.write_image(str(photos / ("p%d.jpg" % i)), photo(30 + i).numpy(), quality=90)  # 4:2:0
    rsz.write_image(str(photos / "p5.png"), photo(40).numpy())
    names = ["p%d.jpg" % i for i in range(5)] + ["p5.png"]
    try:
        probe = rsz.run("resample", str(photos / "p0.jpg"), str(tmp_path / "probe.jpg"), size="16x16",
                        backend="cuda", decode="gpu", check=False)
    except rsz.CommandError as e:  # a build without nvJPEG: no GPU stage
        pytest.skip(str(e))
    assert probe.status == 0, probe.messages
    cpu = rsz.run("resample", str(photos), str(tmp_path / "cpu") + "/", size="96x64", antialias=True, backend="cpu")
    assert cpu.status == 0
    monkeypatch.setenv("RSZ_GPU_STATS", "1")
    try:
        rsz.release_gpu()
        capfd.readouterr()
        for run in range(2):
            out = tmp_path / ("cuda%d" % run)
            report = rsz.run("resample", str(photos), str(out) + "/", size="96x64", antialias=True, backend="cuda")
            assert report.status == 0 and len(report.outputs) == 6
            for name in names:
                assert (out / name).read_bytes() == (tmp_path / "cpu" / name).read_bytes(), name
        report = rsz.run("resample", str(photos), str(tmp_path / "decoded") + "/", size="96x64", antialias=True,
                         backend="cuda", decode="gpu")
        assert report.status == 0
        assert rsz.release_gpu() == 2  # the batching stage and the decoding one
        said = capfd.readouterr().err
        assert said.count("rsz: GPU stage made") == 2, said
        assert ", 12 files, " in said, said  # both backend="cuda" runs' images through the first stage
        assert ", 6 files, " in said, said  # the JPEGs decoded on the GPU, the PNG's pixels decoded on the CPU
    finally:
        rsz.release_gpu()
