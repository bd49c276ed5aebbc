"""Layers on a real GPU (marked `gpu`; they skip where CUDA is missing): `.to('cuda')` moves
the parameters for real, a training step runs there, and a device mismatch inside a layer is
explained from PyTorch's own CUDA message, as tests/unit/program/test_nn.py checks on simulated CUDA."""

from __future__ import annotations

import pytest
import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

pytestmark = pytest.mark.gpu

TRAIN = (
    "torch.manual_seed(0)\n"
    "net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))\n"
    "net.to(DEVICE)\n"
    "x = torch.randn(16, 3).to(DEVICE)\n"
    "y = torch.randn(16, 1).to(DEVICE)\n"
    "opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)\n"
    + "opt.zero_grad()\nloss = nn.MSELoss()(net(x), y)\nloss.backward()\nopt.step()\n"
    * 3
)


def real(source: str):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return run_program(source, RunOptions(simulate_cuda=False, classic=False))


def test_training_on_the_gpu_matches_the_cpu():
    gpu = real(TRAIN.replace("DEVICE", "'cuda'"))
    assert gpu.error is None, gpu.error
    cpu = run_program(TRAIN.replace("DEVICE", "'cpu'"), RunOptions(classic=False))
    assert gpu.tensor("net.0.weight").device == "cuda:0"
    for name in ("net.0.weight", "net.2.bias", "loss"):
        got = torch.tensor(gpu.tensor(name).value)
        assert torch.allclose(got, torch.tensor(cpu.tensor(name).value), atol=1e-5), name


def test_a_cpu_input_to_a_gpu_layer_is_explained():
    trace = real("net = nn.Linear(3, 4).to('cuda')\nx = torch.randn(2, 3)\ny = net(x)\n")
    err = trace.error
    assert err is not None and err.kind == "runtime" and err.line == 3, err
    assert err.details.device.fix_code == "x = x.to(next(net.parameters()).device)"
