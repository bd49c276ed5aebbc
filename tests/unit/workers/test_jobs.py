"""Job workers started on demand: streaming, stop, limits, deaths, slots (no Streamlit)."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
import torch
from PIL import Image

from gradviz.speed import memory, timing, workloads
from gradviz.util import resources
from gradviz.util.busy import Busy
from gradviz.workers import jobs
from gradviz.workers.jobs import Job, JobLimits, Slots
from gradviz.workers.protocol import ErrorKind

LIMITS = JobLimits(seconds=60, memory_bytes=400_000_000)


def _job(kind, *args, limits=LIMITS, **kw) -> Job:
    return Job(kind, args, limits, testing=True, in_process=False, **kw)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_events_stream_in_order_and_the_result_comes_back():
    job = _job("count", 5, 0.01)
    assert list(job.stream()) == [0, 1, 2, 3, 4]
    assert job.status == "done" and job.result == 5
    assert job.pid != os.getpid()
    job.wait(10)
    assert _gone(job.pid), "the worker should exit when its job ends"


def test_stop_ends_the_job_cleanly_with_its_result():
    job = _job("count", 10_000, 0.01)
    first = job.next_events(0, timeout=30)
    assert first
    job.stop()
    assert job.wait(30)
    assert job.status == "done"
    assert 0 < job.result < 10_000
    assert job.result == len(job.events)


def test_worker_sets_its_own_threads_and_the_server_keeps_its():
    before = torch.get_num_threads()
    job = _job("threads", limits=JobLimits(60, 400_000_000, threads=2))
    job.wait(60)
    assert job.status == "done" and job.result == 2
    assert torch.get_num_threads() == before


def test_segfault_is_a_death_with_a_message():
    job = _job("crash")
    job.wait(60)
    assert job.status == "died" and job.message == "SIGSEGV"
    assert "ended unexpectedly (SIGSEGV)" in job.describe_failure("the timing")


def test_hang_meets_the_wall_clock():
    job = _job("hang", limits=JobLimits(seconds=3, memory_bytes=400_000_000))
    started = time.monotonic()
    job.wait(60)
    assert job.status == "timeout"
    assert time.monotonic() - started < 20
    assert "more than 3 s" in job.describe_failure("the job")
    assert _gone(job.pid)


def test_a_job_sending_events_without_pause_still_meets_the_wall_clock():
    job = _job("count", 10**9, 0.0, limits=JobLimits(seconds=2, memory_bytes=400_000_000))
    job.wait(30)
    assert job.status == "timeout"


def test_stop_with_grace_kills_a_job_that_ignores_it():
    job = _job("hang")
    time.sleep(1.0)
    job.stop(grace=0.5)
    job.wait(30)
    assert job.status == "killed"


def test_shared_memory_bomb_meets_the_watchdog():
    job = _job("allocate", 800_000_000, True, limits=JobLimits(60, 150_000_000))
    job.wait(60)
    assert job.status == "memory"
    assert "more than 150 MB" in job.describe_failure("the job")


def test_private_memory_bomb_meets_the_data_limit():
    job = _job("allocate", 800_000_000, False, limits=JobLimits(60, 150_000_000))
    job.wait(60)
    assert job.status in ("error", "memory")
    assert "memory" in job.describe_failure("the job")


def test_worker_cannot_write_files(tmp_path):
    target = tmp_path / "out.bin"
    job = _job("write", str(target))
    job.wait(60)
    assert job.status == "error" and "File too large" in job.message
    assert not target.exists() or target.stat().st_size == 0


def test_an_exception_in_the_job_is_an_error_not_a_death():
    job = _job("fail", "no such folder")
    assert list(job.stream()) == []
    assert job.status == "error" and job.error.kind == ErrorKind.VALUE
    assert job.error.name == "ValueError"
    assert job.message == "no such folder"


def test_unknown_and_test_only_jobs_are_refused():
    with pytest.raises(ValueError, match="unknown job"):
        Job("rm -rf", (), LIMITS)
    with pytest.raises(ValueError, match="unknown job"):
        Job("crash", (), LIMITS)  # exists only with testing=True


def test_in_process_mode_streams_the_same():
    job = Job("count", (3,), LIMITS, testing=True, in_process=True)
    assert list(job.stream()) == [0, 1, 2] and job.result == 3 and job.pid is None


def test_a_job_nobody_reads_is_stopped():
    job = _job("count", 100_000, 0.01, limits=JobLimits(60, 400_000_000, abandon_after=1.0))
    job.wait(30)
    assert job.status == "done" and job.abandoned
    assert job.result < 100_000


def test_slots_cap_and_queue():
    slots = Slots(1, "training")
    assert slots.try_acquire()
    assert not slots.try_acquire()
    seen = []
    with pytest.raises(Busy, match=r"1 training job running \(at most 1 at a time"):
        slots.acquire(0.3, on_wait=lambda running, ahead: seen.append((running, ahead)), poll=0.1)
    assert seen and seen[0] == (1, 0)
    assert slots.waiting == 0

    got = threading.Event()
    t = threading.Thread(target=lambda: (slots.acquire(10, poll=0.05), got.set()))
    t.start()
    time.sleep(0.3)
    assert slots.waiting == 1 and "1 other visitor waiting" in slots.busy_message()
    slots.release()
    t.join(5)
    assert got.is_set() and slots.in_use == 1


def test_a_job_releases_its_slot_after_its_worker_exits():
    slots = Slots(1, "speed")
    assert slots.try_acquire()
    job = jobs.start("count", (2,), LIMITS, slots, testing=True, in_process=False)
    job.wait(60)
    assert slots.in_use == 0 and _gone(job.pid)


def test_timing_job_runs_in_a_worker_with_all_cpus():
    job_spec = workloads.TimingJob("matmul", 128)
    before = torch.get_num_threads()
    job = jobs.start(
        "speed_compare", ([job_spec], 3, 1), memory.job_limits([job_spec]), in_process=False
    )
    events = list(job.stream())
    assert job.status == "done", job.describe_failure()
    comparison = events[-1]
    assert isinstance(comparison, timing.Comparison)
    assert comparison.timing.threads == resources.available_cpus()
    assert any(isinstance(e, timing.Progress) for e in events)
    assert torch.get_num_threads() == before


def test_timing_sweep_job_stops_between_points():
    steps = workloads.sweep_jobs("elementwise", [1_000, 10_000, 100_000, 1_000_000] * 5, ["cpu"])
    job = jobs.start(
        "speed_sweep", (steps, 15, 1, None), memory.job_limits(steps), in_process=False
    )
    while not any(isinstance(e, timing.Point) for e in job.events):
        job.next_events(len(job.events), 1.0)
        assert not job.finished
    job.stop()
    job.wait(60)
    assert job.status == "done" and job.result == "stopped"
    assert 0 < sum(isinstance(e, timing.Point) for e in job.events) < len(steps)


# ---------------------------------------------------------------- training jobs


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    for split, n in (("train", 8), ("test", 3)):
        for k, c in enumerate(("cat", "dog", "ship")):
            d = root / split / c
            d.mkdir(parents=True)
            for i in range(n):
                arr = rng.integers(0, 40, (32, 32, 3), dtype=np.uint8) + np.uint8(k * 60)
                Image.fromarray(arr).save(d / f"{i}.png")
    return root


SETTINGS = {
    "device_choice": "cpu",
    "preset": "fast",
    "epochs": 2,
    "batch_size": 8,
    "lr": 0.1,
    "time_limit": 60.0,
}


def _train(folder, **changes):
    from gradviz.training.settings import training_limits

    settings = dict(SETTINGS, **changes)
    return jobs.start(
        "train",
        ({"kind": "folder", "path": str(folder)}, settings),
        training_limits(settings["time_limit"], 2),
        in_process=False,
    )


def test_training_job_streams_progress_and_returns_results(folder):
    job = _train(folder)
    events = list(job.stream())
    kinds = [e.kind for e in events]
    assert kinds[0] == "data" and "24 training and 9 test images" in events[0].describe
    assert kinds[1] == "start" and events[1].arch == "fast-cpu"
    assert kinds.count("epoch") == 2 and kinds[-2:] == ["end", "evaluating"]
    assert job.status == "done", job.describe_failure()
    result = job.result
    assert result.stopped is None and result.images_seen == 48
    assert "Accuracy of the network on the 9 test images" in result.report[0]
    assert result.confusion_png.startswith(b"\x89PNG") and result.weights
    from gradviz.training.checkpoint import load_weights

    arch, _model = load_weights(result.weights, num_classes=3)
    assert arch == "fast-cpu"
    from gradviz.training.jobs import plain

    assert plain(events, "events") is events and plain(result) is result  # nothing for torch


def test_only_plain_data_leaves_a_training_worker():
    """Unpickling a tensor, or a numpy float (a float subclass), would import torch or numpy
    in the server: the training jobs check what they send and name what is not plain."""
    from gradviz.training.jobs import plain

    ok = {"a": [1, 2.5, None, True, "x", b"png"], "b": (1,), "c": {"d": float("nan")}}
    assert plain(ok) is ok
    for bad, where in (
        ({"accuracy": np.float64(0.5)}, "['accuracy']"),
        ({"history": [{"loss": torch.tensor(1.0)}]}, "['history'][0]['loss']"),
        ({"confusion": np.zeros((2, 2))}, "['confusion']"),
        ({np.int64(1): 2}, "a key of"),
    ):
        with pytest.raises(TypeError, match="not plain data") as info:
            plain(bad)
        assert where in str(info.value)


def test_training_job_stop_hands_back_what_was_learned(folder):
    job = _train(folder, epochs=200, time_limit=120.0)
    while not any(e.kind == "epoch" for e in job.events):
        job.next_events(len(job.events), 1.0)
        assert not job.finished, job.describe_failure()
    job.stop()
    job.wait(60)
    assert job.status == "done", job.describe_failure()
    assert job.result.stopped == "stop requested"
    assert 0 < job.result.epochs_done < 200 and job.result.weights
    assert _gone(job.pid)


def test_training_job_reports_a_bad_folder_as_a_data_error(tmp_path):
    job = _train(tmp_path / "missing")
    job.wait(60)
    assert job.status == "error" and job.error.kind == ErrorKind.DATA
    assert "does not exist" in job.message


def test_training_wall_clock_is_the_time_limit_plus_a_margin():
    from gradviz.training.settings import MARGIN_SECONDS, effective_time_limit, training_limits

    assert training_limits(30.0, 2).seconds == 30.0 + MARGIN_SECONDS
    assert effective_time_limit(0) == effective_time_limit(None) == 600.0
    assert effective_time_limit(float("nan")) == 600.0
    assert effective_time_limit(1e12) == 600.0
    assert effective_time_limit(5.0) == 5.0


def test_a_running_job_does_not_hold_up_the_autograd_pool():
    from gradviz.program.results.trace import RunOptions
    from gradviz.services.programs import run_isolated
    from gradviz.workers.pool import Pool, SandboxLimits

    with Pool(SandboxLimits(workers=1, run_seconds=20)) as pool:
        job = _job("hang")  # a job that never ends, like a long training run
        try:
            started = time.monotonic()
            trace = run_isolated("x = torch.ones(3)\ny = x * 2\n", RunOptions(), pool=pool)
            assert trace.error is None
            assert job.pid not in pool.pids()
            assert time.monotonic() - started < 60 and not job.finished
        finally:
            job.kill()
            job.wait(10)


def test_public_host_shares_one_slot_between_training_and_timing(monkeypatch):
    monkeypatch.setattr(jobs, "_slots", {})
    monkeypatch.delenv("GRADVIZ_PUBLIC", raising=False)
    assert jobs.slots("training") is not jobs.slots("speed")
    monkeypatch.setattr(jobs, "_slots", {})
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    heavy = jobs.slots("training")
    assert jobs.slots("speed") is heavy and heavy.size == 1
    assert heavy.try_acquire()
    try:
        assert not jobs.slots("speed").try_acquire()  # a timing waits for the training
    finally:
        heavy.release()
    assert jobs.slots("evaluate") is not heavy  # small jobs keep their own slot


class _Blob(bytearray):
    """Bytes a weak reference can watch (uploaded weights, in the page's job)."""


def test_a_job_keeps_no_copy_of_its_arguments_once_the_worker_has_them():
    import gc
    import weakref

    blob = _Blob(1000)
    watch = weakref.ref(blob)
    job = _job("hang", blob)
    try:
        del blob
        gc.collect()
        assert watch() is None, "the job still holds its arguments (an upload's bytes)"
    finally:
        job.kill()
        job.wait(10)
