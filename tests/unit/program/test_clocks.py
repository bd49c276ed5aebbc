"""`import time` in a program (time, perf_counter, monotonic, a capped sleep), and the note
seed 003's timing idiom earns: the clock read around CUDA work that nothing waited for."""

from __future__ import annotations

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from gradviz.program.runtime.clocks import MAX_SLEEP_S, ClockWatch

# Seed 003's CPU-vs-GPU block as written, at a size the caps allow (the lesson: 100x1000x1000,
# 1000 loops).
SEED_003 = """import torch
import time


with torch.no_grad():
    time_start = time.time()

    tensor1 = torch.randn(10, 100, 100)
    tensor2 = torch.randn(10, 100, 100)

    result = tensor1 * tensor2
    for i in range(20):
        result = result + tensor1 * tensor2

    time_end = time.time()
    print('Time cost on CPU = %fs' % (time_end - time_start))


    time_start = time.time()

    tensor1 = torch.randn(10, 100, 100).cuda()
    tensor2 = torch.randn(10, 100, 100).cuda()

    result = tensor1 * tensor2
    for i in range(20):
        result = result + tensor1 * tensor2

    time_end = time.time()
    print('Time cost on GPU = %fs' % (time_end - time_start))
"""


def run(source: str, **options):
    return run_program(source, RunOptions(classic=False, **options))


def test_seed_003s_timing_runs_as_written_and_says_what_it_measured():
    trace = run(SEED_003, simulate_cuda=True)
    assert trace.error is None, trace.error
    assert [line.split("=")[0] for line in trace.stdout] == [
        "Time cost on CPU ",
        "Time cost on GPU ",
    ]
    notes = [n for n in trace.device_notes if "torch.cuda.synchronize()" in n]
    assert len(notes) == 1
    assert notes[0].startswith("Lines 19–28:")  # the GPU block's two clock reads
    assert "measures launching the work, not doing it" in notes[0]
    assert "Here CUDA is simulated" in notes[0]


def test_no_note_when_the_gpu_was_waited_for():
    synced = SEED_003.replace(
        "    time_end = time.time()\n    print('Time cost on GPU",
        "    torch.cuda.synchronize()\n    time_end = time.time()\n    print('Time cost on GPU",
    )
    assert synced != SEED_003
    trace = run(synced, simulate_cuda=True)
    assert trace.error is None
    assert not [n for n in trace.device_notes if "synchronize" in n]
    item = SEED_003.replace(
        "    time_end = time.time()\n    print('Time cost on GPU",
        "    s = result.sum().item()\n    time_end = time.time()\n    print('Time cost on GPU",
    )
    assert not [n for n in run(item, simulate_cuda=True).device_notes if "synchronize" in n]


def test_cpu_only_timing_has_no_note():
    cpu_only = SEED_003.split(
        "    time_start = time.time()\n\n    tensor1 = torch.randn(10, 100, 100).cuda()"
    )[0]
    trace = run(cpu_only)
    assert trace.error is None and len(trace.stdout) == 1
    assert not [n for n in trace.device_notes if "synchronize" in n]


def test_clocks_give_numbers_and_sleep_is_capped():
    trace = run(
        "import time\nt0 = time.perf_counter()\ntime.sleep(0.01)\n"
        "dt = time.perf_counter() - t0\nok = dt >= 0.01\nm = time.monotonic() > 0\n"
        "print(ok, m, time.time() > 1e9)\n"
    )
    assert trace.error is None, trace.error
    assert trace.stdout == ["True True True"]
    trace = run(f"import time\nx = 1\ntime.sleep({MAX_SLEEP_S + 1})\n")
    assert trace.error.line == 3 and trace.error.col == 1
    assert "at most 1 s a call" in trace.error.message


@pytest.mark.parametrize("bad", ["-1", "'1'", "None", "True"])
def test_sleep_refuses_what_is_not_a_duration(bad):
    trace = run(f"import time\ntime.sleep({bad})\n")
    assert trace.error is not None and trace.error.line == 2
    assert "Traceback" not in trace.error.message


def test_calls_before_the_first_clock_read_are_not_followed(monkeypatch):
    """Before the first read nothing can be pending: the watch follows calls from it on, and
    the note still sees the work launched between two reads."""
    seen = []
    real = ClockWatch.after_call

    def spy(self, label, *rest):
        seen.append(label)
        return real(self, label, *rest)

    monkeypatch.setattr(ClockWatch, "after_call", spy)
    source = (
        "import time\nimport torch\n"
        "x = torch.ones(3, device='cuda')\ny = x + 1\n"
        "t0 = time.time()\nz = y * 2\nt1 = time.time()\n"
    )
    trace = run_program(source, RunOptions(classic=False, simulate_cuda=True))
    assert trace.error is None, trace.error
    assert seen == ["time.time", "*", "time.time"]
    assert any("Lines 5–7" in note for note in trace.device_notes), trace.device_notes
