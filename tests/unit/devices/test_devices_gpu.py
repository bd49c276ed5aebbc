"""The device lessons on a real GPU (marked `gpu`; they skip where CUDA is missing).

The same table as tests/unit/devices/test_devices.py runs on simulated CUDA. Here nothing is
simulated: PyTorch's CUDA kernels raise their own messages, which gradviz must explain
the same way (kind, line, devices, tensor to move, fix)."""

from __future__ import annotations

import pytest
import torch

from gradviz.devices.lessons import LESSONS, LESSONS_BY_KEY
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

pytestmark = pytest.mark.gpu


def real(source: str, **options):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return run_program(source, RunOptions(simulate_cuda=False, classic=False, **options))


def _need(gpus: int) -> None:
    if torch.cuda.is_available() and torch.cuda.device_count() < gpus:
        pytest.skip(f"needs {gpus} CUDA GPUs")


@pytest.mark.parametrize("lesson", [x for x in LESSONS if x.error], ids=lambda x: x.key)
def test_mixing_errors_on_a_real_gpu(lesson):
    _need(lesson.gpus)
    trace = real(lesson.source)
    err = trace.error
    assert err is not None and err.kind == "runtime", err
    assert err.line == lesson.line
    details = err.details
    assert details.device.kind == lesson.kind
    assert set(details.device.devices) == set(lesson.devices)
    assert details.device.move == lesson.move
    assert details.device.fix_code == lesson.fix
    assert details.device.source == "captured on a real GPU"


@pytest.mark.parametrize("lesson", [x for x in LESSONS if not x.error], ids=lambda x: x.key)
def test_allowed_mixes_on_a_real_gpu(lesson):
    _need(lesson.gpus)
    trace = real(lesson.source)
    assert trace.error is None, trace.error
    assert not trace.simulated


def test_real_and_simulated_agree_on_devices_and_gradients():
    source = LESSONS_BY_KEY["copy"].source
    gpu = real(source)
    sim = run_program(source, RunOptions(simulate_cuda=True, classic=False))
    assert [t.device for t in gpu.tensors] == [t.device for t in sim.tensors]
    assert gpu.tensor("x").grad == pytest.approx(sim.tensor("x").grad)
    assert [e.copy for e in gpu.graph.edges if e.copy] == [
        e.copy for e in sim.graph.edges if e.copy
    ]
    assert gpu.memory and gpu.memory[0].device == "cuda:0"
