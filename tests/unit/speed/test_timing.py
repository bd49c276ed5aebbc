"""Unit tests for gradviz.speed.timing, workloads, memory and timing_reference: cost model, both timers (with a fake clock and for real on
CPU), memory bound, sweep events, crossover, peaks and the GPU reference loader."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch

from gradviz.speed import gpus, memory, timing, timing_reference, workloads
from gradviz.speed import measure as measuring
from gradviz.speed.measure import measure, reference_dict, sweep
from gradviz.speed.memory import SizeTooLarge, check_memory
from gradviz.speed.timing import Point, Progress, Skipped, crossover, naive_time
from gradviz.speed.workloads import TimingJob, sweep_jobs
from gradviz.util import resources
from gradviz.util.reference import ReferenceFileError, load_reference

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "gpu_speed_reference.TEST_FIXTURE.json"


class FakeGpu:
    """A clock plus an asynchronous 'device': launching work costs `launch_s` of host time,
    the work itself (`work_s`) only shows up when someone synchronizes."""

    def __init__(self, launch_s: float = 0.001, work_s: float = 2.0, first_call_s: float = 0.0):
        self.now = 100.0
        self.pending = 0.0
        self.launch_s = launch_s
        self.work_s = work_s
        self.first_call_s = first_call_s
        self.calls = 0

    def clock(self) -> float:
        return self.now

    def launch(self, *_args) -> None:
        if self.calls == 0:
            self.now += self.first_call_s  # context creation, library loading
        self.calls += 1
        self.now += self.launch_s
        self.pending += self.work_s

    def synchronize(self) -> None:
        self.now += self.pending
        self.pending = 0.0


# --- cost model ---------------------------------------------------------------------------


def test_lesson_loop_cost_model_matches_hand_count():
    job = TimingJob(
        "elementwise", workloads.LESSON_ELEMENTS, "cpu", "float32", workloads.LESSON_ITERATIONS
    )
    # one mul, then 1000 x (mul + add), each over 1e8 elements
    assert job.flops() == 1e8 * 2001
    # each op reads two 4-byte tensors and writes one
    assert job.bytes_moved() == 4 * 1e8 * (3 + 6 * 1000)
    # t1, t2, result, t1*t2 and the new result live at once
    assert job.memory_needed() == 5 * 4 * 10**8
    assert workloads.elementwise_shape(workloads.LESSON_ELEMENTS) == (100, 1000, 1000)
    assert workloads.elementwise_shape(1234) == (1234,)


def test_matmul_cost_model():
    job = TimingJob("matmul", 1000, "cpu", "bfloat16")
    assert job.flops() == 2e9
    assert job.memory_needed() == 3 * 1000 * 1000 * 2
    assert job.spec.describe_size(8) == "8x8 @ 8x8"


def test_workloads_compute_what_the_lesson_computes():
    torch.manual_seed(0)
    elementwise = TimingJob("elementwise", 6, "cpu", "float32", 4)
    a, b = measuring.make_inputs(elementwise)
    assert torch.allclose(measuring.run_kernel(elementwise, (a, b)), 5 * a * b)
    matmul = TimingJob("matmul", 5, "cpu", "float32", 2)
    x, y = measuring.make_inputs(matmul)
    assert torch.allclose(measuring.run_kernel(matmul, (x, y)), x @ y)


def test_validate_job_messages():
    with pytest.raises(ValueError, match="Unknown workload"):
        workloads.validate_job(TimingJob("conv", 3))
    with pytest.raises(ValueError, match="Unknown dtype"):
        workloads.validate_job(TimingJob("matmul", 3, dtype="int8"))
    with pytest.raises(ValueError, match="at least 1"):
        workloads.validate_job(TimingJob("matmul", 0))
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            measuring.validate_on_host(TimingJob("matmul", 3, device="cuda"))


# --- naive vs correct, with a fake clock --------------------------------------------------


def test_naive_timer_measures_launches_not_work():
    gpu = FakeGpu(launch_s=0.001, work_s=2.0)

    def setup():
        gpu.now += 0.5  # randn on the CPU + copy
        return "inputs"

    naive = naive_time(setup, gpu.launch, clock=gpu.clock, synchronize=gpu.synchronize)
    assert naive.setup_s == pytest.approx(0.5)
    assert naive.launch_s == pytest.approx(0.001)
    assert naive.total_s == pytest.approx(0.501)  # what the lesson printed
    assert naive.pending_s == pytest.approx(2.0)  # the work it never saw
    assert naive.work_s == pytest.approx(2.001)


def test_correct_timer_synchronizes_and_skips_warmup():
    gpu = FakeGpu(launch_s=0.001, work_s=2.0, first_call_s=3.0)
    gpu.pending = 7.0  # work queued before the measurement must not be counted
    t = measure(gpu.launch, repeats=4, warmup=1, clock=gpu.clock, synchronize=gpu.synchronize)
    assert t.repeats == 4
    assert t.warmup == 1
    assert t.times_s == pytest.approx((2.001,) * 4)
    assert t.median_s == pytest.approx(2.001)
    assert t.iqr_s == pytest.approx(0.0)
    assert gpu.calls == 5


def test_correct_timer_without_sync_would_be_wrong():
    """The same fake device timed without synchronize sees only launches: the lesson's error."""
    gpu = FakeGpu(launch_s=0.001, work_s=2.0)
    t = measure(gpu.launch, repeats=3, warmup=0, clock=gpu.clock)
    assert t.median_s == pytest.approx(0.001)


def test_median_and_iqr_from_known_times():
    ticks = iter([0, 1, 0, 3, 0, 2, 0, 10, 0, 4])  # durations 1, 3, 2, 10, 4
    t = measure(lambda: None, repeats=5, warmup=0, clock=lambda: next(ticks))
    assert t.median_s == 3
    assert t.iqr_s == pytest.approx(4 - 2)
    assert t.noisy  # torch.utils.benchmark flags a spread this wide


def test_measure_rejects_bad_counts():
    with pytest.raises(ValueError):
        measure(lambda: None, repeats=0)
    with pytest.raises(ValueError):
        measure(lambda: None, warmup=-1)


# --- real measurements on CPU (sane bounds, not performance thresholds) -------------------


def test_known_cost_workload_measured_within_sane_bounds():
    t = measure(lambda: time.sleep(0.02), repeats=3, warmup=1)
    assert 0.019 <= t.median_s < 1.0
    assert t.threads == torch.get_num_threads()


def test_run_job_on_cpu_gives_a_plausible_point():
    p = measuring.run_job(TimingJob("matmul", 128, "cpu", "float32"), repeats=3, warmup=1)
    assert p.repeats == 3
    assert 0 < p.median_s < 10
    assert p.gflops == pytest.approx(2 * 128**3 / p.median_s / 1e9)
    assert p.rate == p.gflops
    e = measuring.run_job(
        TimingJob("elementwise", 10_000, "cpu", "float32", 3), repeats=2, warmup=0
    )
    assert e.rate == e.gbps > 0


def test_compare_naive_and_correct_on_cpu():
    c = measuring.compare_naive_and_correct(TimingJob("elementwise", 100_000, "cpu", "float32", 5))
    assert c.naive.total_s == pytest.approx(c.naive.setup_s + c.naive.launch_s)
    assert c.naive.pending_s < 0.05  # a CPU has nothing queued: synchronize returns at once
    assert c.timing.repeats == 3
    assert c.timing.median_s > 0


def test_estimate_scales_by_cost():
    cal = Point("elementwise", "cpu", "float32", 1_000_000, 2, 0.01, 0.0, 3)
    full = TimingJob(
        "elementwise", workloads.LESSON_ELEMENTS, "cpu", "float32", workloads.LESSON_ITERATIONS
    )
    assert timing.estimate_seconds(full, cal) == pytest.approx(0.01 * 100 * 6003 / 15)
    with pytest.raises(ValueError):
        timing.estimate_seconds(TimingJob("matmul", 4), cal)


def test_threads_set_to_available_cpus():
    n = measuring.use_available_cpus()
    assert n == resources.available_cpus() >= 1
    assert torch.get_num_threads() == n


def test_matmul_precision_restores_setting():
    settings = torch.backends.cuda.matmul
    before = settings.fp32_precision
    with measuring.matmul_precision(True, "cuda"):
        assert settings.fp32_precision == "tf32"
    assert settings.fp32_precision == before
    with measuring.matmul_precision(True, "cpu"):
        assert settings.fp32_precision == before


def test_dtype_notes():
    assert "CPU runs strict float32" in workloads.dtype_note("tf32", "cpu")
    assert workloads.dtype_note("float32", "cpu") is None
    assert workloads.dtype_note("bfloat16", "cuda") is None


# --- memory bound -------------------------------------------------------------------------


def test_check_memory_refuses_with_size_and_limit():
    job = TimingJob("elementwise", workloads.LESSON_ELEMENTS, "cpu", "float32", 1)
    with pytest.raises(SizeTooLarge) as info:
        check_memory(job, available=1_000_000_000)
    msg = str(info.value)
    assert "100x1000x1000" in msg
    assert "2.0 GB" in msg  # what it needs
    assert "500 MB" in msg  # the limit: half of 1 GB
    check_memory(job, available=10_000_000_000)  # fits: no error
    check_memory(TimingJob("matmul", 10), available=None)


def test_check_memory_uses_the_host_figure():
    huge = TimingJob("elementwise", 10**13, "cpu")
    with pytest.raises(SizeTooLarge, match="RAM"):
        check_memory(huge)
    assert memory.available_memory("cpu") > 0


# --- sweep --------------------------------------------------------------------------------


def _fake_run(job, *, repeats, warmup):
    if job.size > 1000:
        raise SizeTooLarge(f"{job.size} is too big")
    return Point(
        job.workload, job.device, job.dtype, job.size, job.iterations, job.size * 1e-6, 0, 3
    )


def test_sweep_yields_progress_points_and_skips():
    jobs = sweep_jobs("matmul", [2000, 10, 100], ["cpu", "cuda"])
    assert [j.size for j in jobs] == [10, 10, 100, 100, 2000, 2000]
    events = list(sweep(jobs, run=_fake_run))
    progress = [e for e in events if isinstance(e, Progress)]
    assert [p.done for p in progress] == [0, 1, 2, 3, 4, 5, 6]
    assert progress[-1].total == 6
    assert [e.size for e in events if isinstance(e, Point)] == [10, 10, 100, 100]
    skipped = [e for e in events if isinstance(e, Skipped)]
    assert len(skipped) == 2
    assert "too big" in skipped[0].reason


def test_sweep_stops_between_steps_when_the_caller_stops_iterating():
    ran = []

    def run(job, **kw):
        ran.append(job.size)
        return _fake_run(job, **kw)

    for event in sweep(sweep_jobs("matmul", [1, 2, 3, 4], ["cpu"]), run=run):
        if isinstance(event, Point) and event.size == 2:
            break  # what the page does when Stop is pressed
    assert ran == [1, 2]


def test_sweep_skips_steps_predicted_too_long():
    def run(job, **_):
        return Point(job.workload, job.device, job.dtype, job.size, 1, 1.0, 0, 1)

    events = list(sweep(sweep_jobs("matmul", [100, 1000], ["cpu"]), max_step_s=60, run=run))
    skipped = [e for e in events if isinstance(e, Skipped)]
    assert len(skipped) == 1  # 1000 costs 1000x the 1 s of size 100
    assert "60 s allowed" in skipped[0].reason


def _pt(device, size, median):
    return Point("matmul", device, "float32", size, 1, median, 0, 3)


def test_crossover_is_where_gpu_wins_from_then_on():
    pts = [
        _pt("cpu", 64, 1e-5),
        _pt("cuda", 64, 2e-5),
        _pt("cpu", 128, 5e-5),
        _pt("cuda:0", 128, 4e-5),
        _pt("cpu", 256, 3e-4),
        _pt("cuda", 256, 5e-5),
        _pt("cuda", 512, 6e-5),  # no cpu figure: not compared
    ]
    assert crossover(pts) == 128
    assert crossover(pts[:2]) is None
    assert crossover([]) is None


# --- peaks --------------------------------------------------------------------------------


def test_peaks_match_device_names():
    assert gpus.for_device_name("NVIDIA H100 80GB HBM3").label == "NVIDIA H100 SXM"
    assert gpus.for_device_name("NVIDIA H100 PCIe").label == "NVIDIA H100 PCIe"
    assert gpus.for_device_name("NVIDIA A100-SXM4-80GB").memory_gbps == 2039
    assert gpus.for_device_name("Some CPU") is None
    p = Point("elementwise", "cuda", "float32", 10**8, 1, 1.0, 0, 3)
    peak = gpus.for_device_name("NVIDIA H200")
    assert timing.fraction_of_peak(p, peak) == pytest.approx(p.gbps / 4800)
    assert timing.fraction_of_peak(p, None) is None
    assert timing.peak_rate(peak, "matmul", "bfloat16") == 989_500
    assert gpus.for_device_name("NVIDIA A100 80GB PCIe").memory_gbps == 1935
    assert gpus.for_device_name("NVIDIA A100-SXM4-40GB").memory_gbps == 1555
    lesson_gpu = gpus.for_device_name("NVIDIA GeForce GTX 1060 6GB")
    half = Point("matmul", "cuda", "float16", 1024, 1, 1.0, 0, 3)
    assert timing.peak_rate(lesson_gpu, "matmul", "float16") is None
    assert timing.fraction_of_peak(half, lesson_gpu) is None


def test_device_names_match_whole_words():
    """ "L4" is not the L40S, "A10" not the A100 or the A10G, "T4" not an RTX A4000."""
    assert gpus.for_device_name("NVIDIA L4").key == "L4"
    assert gpus.for_device_name("NVIDIA L40S") is None
    assert gpus.for_device_name("NVIDIA A10").key == "A10"
    assert gpus.for_device_name("NVIDIA A10G").key == "A10G"
    assert gpus.for_device_name("Tesla T4").key == "T4"
    assert gpus.for_device_name("NVIDIA RTX A4000") is None
    assert gpus.for_device_name("NVIDIA GeForce RTX 4090").key == "RTX-4090"


# --- reference file -----------------------------------------------------------------------


def test_fixture_loads_and_is_marked_as_fixture():
    ref = load_reference(FIXTURE, timing_reference.REFERENCE_FORMAT)
    assert "TEST FIXTURE" in ref.note
    assert ref.device == "FAKE GPU (test fixture)"
    assert ref.date.startswith("2000")
    assert len(ref.points) == 5
    assert ref.comparisons[0].naive.pending_s == 0.0008
    assert ref.comparisons[0].job.iterations == 10


def test_absent_reference_is_none(tmp_path):
    assert load_reference(tmp_path / "nope.json", timing_reference.REFERENCE_FORMAT) is None


def test_repo_has_no_made_up_reference():
    """Only bench/speed_gpu.py on a real GPU may write this file; if present it must load."""
    if timing_reference.REFERENCE_PATH.exists():
        ref = load_reference(timing_reference.REFERENCE_PATH, timing_reference.REFERENCE_FORMAT)
        assert "TEST FIXTURE" not in ref.note


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("device"), "missing field 'device'"),
        (lambda d: d.update(date=""), "'date' is empty"),
        (lambda d: d.update(schema="other/1"), "schema should be"),
        (lambda d: d.update(points=[]), "non-empty list"),
        (lambda d: d["points"][0].update(median_s="fast"), "should be float"),
        (lambda d: d["points"][0].update(size=1.5), "'size' should be int"),
        (lambda d: d["points"][0].update(median_s=-1), "finite number"),
        (lambda d: d["points"][1].update(workload="conv"), r"points\[1\].*Unknown workload"),
        (
            lambda d: [p.update(device="cpu") for p in d["points"]],
            "no point was measured on a cuda",
        ),
        (lambda d: d["comparisons"][0].pop("naive"), "missing object 'naive'"),
        (lambda d: d.update(comparisons={"a": 1}), "'comparisons' should be a list"),
    ],
)
def test_loader_rejects_bad_files(tmp_path, mutate, message):
    data = json.loads(FIXTURE.read_text())
    mutate(data)
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ReferenceFileError, match=message):
        load_reference(path, timing_reference.REFERENCE_FORMAT)


def test_loader_rejects_broken_json(tmp_path):
    path = tmp_path / "ref.json"
    path.write_text("{not json")
    with pytest.raises(ReferenceFileError, match="not readable JSON"):
        load_reference(path, timing_reference.REFERENCE_FORMAT)


def test_reference_dict_round_trips(tmp_path):
    comp = timing.Comparison(
        TimingJob("elementwise", 1000, "cuda", "float32", 2),
        timing.NaiveTiming(1.0, 0.9, 0.05, 0.05),
        timing.Timing(0.1, 0.01, (0.1, 0.1), 1, 2, False),
    )
    data = reference_dict(
        device="NVIDIA H100 80GB HBM3",
        command="python bench/speed_gpu.py",
        points=[_pt("cuda", 64, 1e-5), _pt("cpu", 64, 2e-5)],
        comparisons=[comp],
        date="2026-01-01T00:00:00Z",
    )
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(data))
    ref = load_reference(path, timing_reference.REFERENCE_FORMAT)
    assert ref.device == "NVIDIA H100 80GB HBM3"
    assert ref.points[0] == _pt("cuda", 64, 1e-5)
    assert ref.comparisons[0].naive == comp.naive
    assert ref.comparisons[0].job == comp.job
    assert ref.torch == torch.__version__


def test_comparison_events_step_by_step_and_stoppable():
    job = TimingJob("elementwise", 10_000, "cpu", "float32", 2)
    events = list(measuring.comparison_events(job, repeats=2, warmup=1))
    labels = [e.label for e in events if isinstance(e, Progress)]
    assert labels[0].startswith("naive run")
    assert labels[1].startswith("warm-up")
    assert labels[2:4] == ["timed call 1 of 2", "timed call 2 of 2"]
    assert labels[-1] == "done"
    result = events[-1]
    assert isinstance(result, timing.Comparison)
    assert result.timing.repeats == 2
    # Stopping after the naive run: the generator closes, nothing more runs, no error.
    gen = measuring.comparison_events(job, repeats=50, warmup=0)
    steps = [next(gen), next(gen)]
    gen.close()
    assert steps[1].label == "timed call 1 of 50"
    # While suspended between steps, the caller's thread is not left in inference mode.
    gen = measuring.comparison_events(job, repeats=2, warmup=1)
    for _ in gen:
        assert not torch.is_inference_mode_enabled()


def test_comparison_refuses_oversized_jobs_before_allocating():
    with pytest.raises(SizeTooLarge):
        next(measuring.comparison_events(TimingJob("elementwise", 10**13)))


def test_calibration_jobs_are_quick_and_valid():
    for key in workloads.WORKLOADS:
        job = workloads.calibration_job(key)
        workloads.validate_job(job)
        assert job.memory_needed() < 200_000_000
    assert {j.iterations for j in sweep_jobs("elementwise", [10], ["cpu"])} == {10}


# --- the server's side needs no torch ------------------------------------------------------


def test_dtype_sizes_from_the_table_match_torch():
    """The server sizes jobs from a table of element sizes; torch agrees with it."""
    for key, choice in workloads.DTYPES.items():
        dtype = measuring.torch_dtype(key)
        assert choice.itemsize == torch.empty((), dtype=dtype).element_size()


def test_importing_timing_imports_neither_torch_nor_numpy():
    """The Streamlit server uses gradviz.speed.timing's plain part; torch (about 190 MB of PSS) and
    numpy stay out of it; gradviz.speed.measure brings torch."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from gradviz.speed import memory, timing, timing_reference, workloads\n"
        "job = workloads.TimingJob('elementwise', 10**6, 'cuda', 'bfloat16', 10)\n"
        "memory.check_memory(job, 10**10)\n"
        "timing.estimate_seconds(job, timing.Point('elementwise', 'cuda', 'float32', 10**6,"
        " 2, 1e-3, 0, 3))\n"
        "from gradviz.util.reference import load_reference\n"
        "load_reference(sys.argv[1], timing_reference.REFERENCE_FORMAT)\n"
        "memory.job_limits([job])\n"
        "assert 'torch' not in sys.modules and 'numpy' not in sys.modules, 'plain part'\n"
        "from gradviz.speed import measure\n"
        "measure.run_job\n"
        "assert 'torch' in sys.modules, 'torch part'\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(FIXTURE)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(timing.__file__).parents[2])},
    )
    assert out.returncode == 0, out.stderr[-2000:]
