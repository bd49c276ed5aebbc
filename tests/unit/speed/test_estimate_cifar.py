"""The CIFAR-10 tutorial step's cost in gradviz.speed.estimate (CIFAR_STEP) is what torch
counts for TutorialNet's training step, and its estimate behaves: launch-bound at the
tutorial's batch of 4 on every GPU; at 512, bound by memory on a T4 (the fastest GPUs are
still launch-bound: 36 kernels take longer to issue than the work)."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode

from gradviz.speed import estimate, gpus
from gradviz.training.models import TutorialNet

NOT_KERNELS = {"_record_function_enter_new", "_record_function_exit"}  # profiler marks


class CountOps(TorchDispatchMode):
    """Ops that launch a kernel (not views, not profiler marks), and the bytes of their tensor
    arguments and results."""

    def __init__(self) -> None:
        super().__init__()
        self.kernels = 0
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        view = any(
            r.alias_info is not None and not r.alias_info.is_write for r in func._schema.returns
        )
        if view or func.overloadpacket.__name__ in NOT_KERNELS:
            return out
        self.kernels += 1
        tensors = [t for t in tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor)]
        self.bytes += sum(t.numel() * t.element_size() for t in tensors)
        return out


def _count(batch: int) -> tuple[CountOps, int]:
    torch.manual_seed(0)
    net = TutorialNet()
    # As on a GPU, where PyTorch's SGD updates all parameters with foreach kernels.
    opt = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9, foreach=True)
    criterion = nn.CrossEntropyLoss()
    x, y = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))

    def step() -> None:
        opt.zero_grad()
        criterion(net(x), y).backward()
        opt.step()

    step()  # the momentum buffers exist from the second step on, as in training
    ops, flops = CountOps(), FlopCounterMode(display=False)
    with ops, flops:
        step()
    return ops, flops.get_total_flops()


@pytest.mark.parametrize("batch", [1, 4, 64])
def test_the_step_cost_is_what_torch_counts(batch):
    ops, flops = _count(batch)
    cost = estimate.CIFAR_STEP
    assert flops == cost.flops_per_image * batch
    assert ops.kernels == cost.kernels
    assert ops.bytes == cost.bytes_fixed + cost.bytes_per_image * batch


def test_the_tutorials_batch_is_launch_bound_on_every_gpu():
    for gpu in gpus.GPUS:
        if gpu.fp32_tflops is None or gpu.memory_gbps is None:
            with pytest.raises(estimate.NoEstimate):
                estimate.estimate_step(gpu, 4)
            continue
        small = estimate.estimate_step(gpu, 4)
        assert small.bound == "launch overhead", gpu.key
        assert small.run_s == pytest.approx(36 * estimate.LAUNCH_S)
        big = estimate.estimate_step(gpu, 512)
        assert big.run_s >= small.run_s, gpu.key
        assert big.copy_bytes == 512 * (3 * 32 * 32 * 4 + 8)
    assert estimate.estimate_step(gpus.BY_KEY["T4"], 512).bound == "memory"
    with pytest.raises(ValueError, match="at least 1"):
        estimate.estimate_step(gpus.BY_KEY["T4"], 0)
