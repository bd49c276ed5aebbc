"""The worker side of the warm pool and the job workers: imported once in the forkserver,
before any worker is forked (gradviz.workers.table.PRELOAD), and the hooks every worker
calls (prepare, self_test, state) and the pool's jobs (run_job, check_job).

Importing it imports everything a worker needs (so a worker starts warm) and then freezes
the garbage collector's view of those objects (gc.freeze), so workers do not copy the
forkserver's memory pages merely by collecting garbage: their pages stay shared, which
keeps the proportional set size of the whole app down.
"""

from __future__ import annotations

import contextlib
import gc

import torch

from gradviz.program.gradcheck import check_gradients
from gradviz.program.interpreter import run_program
from gradviz.program.results import RunOptions, cap_result

# One thread here, before any torch op: a forkserver that has started OpenMP's thread pool
# forks children whose first parallel region hangs (the pool's threads do not survive a
# fork). Workers choose their own thread count after the fork (prepare).
torch.set_num_threads(1)

with contextlib.suppress(Exception):  # torchviz is optional (the classic view)
    import torchviz  # noqa: F401

# Must be refused by the FLOP cap; checked by every warm worker under its limits.
CANARY = "a = torch.ones(4000, 4000)\nb = a @ a\n"


def prepare(threads: int) -> None:
    """Torch's thread counts for this worker (before its limits are set)."""
    torch.set_num_threads(threads)
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)


def self_test() -> str | None:
    """None when the size checks hold under this worker's limits, else why not."""
    canary = run_job(CANARY, RunOptions(classic=False)).error
    if canary is not None and "floating-point operations" in canary.message:
        return None
    return f"the size checks failed their self-test: {canary}"


def state() -> tuple:
    """Process-wide torch state a program must not be able to change."""
    return (
        str(torch.get_default_dtype()),
        str(torch.get_default_device()),
        torch.get_num_threads(),
        torch.is_grad_enabled(),
        torch.are_deterministic_algorithms_enabled(),
        bytes(torch.get_rng_state().numpy().tobytes()),
    )


def run_job(source, options):
    """run_program, with what goes back to the server bounded here, in the worker (tensors
    with values, values in all, bytes pickled) and a note in trace.summary of what was left out."""
    return cap_result(run_program(source, options))


def check_job(source, target, shown, options, ones):
    return check_gradients(source, target, shown, options, ones=ones)


# Run the interpreter once, before any limit applies: torch imports parts of itself
# lazily (the FLOP counter's machinery looks for a temporary directory), and a worker
# cannot write files. What this warms up is then shared by every worker. (The size check
# of torch.arange runs PyTorch's Python reference, whose first call imports torch._dynamo:
# about a second that the first visitor would otherwise wait for. The CIFAR-10 sample is
# read here too, once, so workers share it and never open the file.)
WARMUP = """x = torch.rand(2, 3, requires_grad=True, dtype=torch.float32)
r = torch.arange(1, 4, dtype=torch.float32)
w = torch.randn(3, 3)
y = F.relu(x @ w + 1)
z = torch.einsum("ij,jk->ik", y, w)
c = F.conv2d(torch.ones(1, 1, 4, 4), torch.ones(1, 1, 2, 2))
p = F.max_pool2d(torch.ones(1, 4, 4), 2)
q = F.linear(x, w) + torch.matmul(x, w).sum() + F.cross_entropy(x, torch.tensor([0, 1]))
s = (z.sum() + q.sum() + c.sum() + p.sum()) ** 2
s.backward()
net = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Dropout(0.1))
opt = optim.Adam(net.parameters())
h = nn.MaxPool2d(2)(torch.ones(1, 1, 4, 4))
loss = nn.MSELoss()(net(x), torch.zeros(2, 2))
loss.backward()
opt.step()
data = torch.utils.data.TensorDataset(x, r[:2])
images, labels = gradviz_cifar10_sample(4)
"""
run_program(WARMUP, RunOptions())

gc.collect()
gc.freeze()
