"""Imported once in the sandbox's forkserver, before any worker is forked.

It imports everything a worker needs (so a worker starts warm) and then freezes the
garbage collector's view of those objects (gc.freeze), so workers do not copy the
forkserver's memory pages merely by collecting garbage: their pages stay shared, which
keeps the proportional set size of the whole app down.
"""

import contextlib
import gc

import torch

import gradviz.check  # noqa: F401
import gradviz.graph  # noqa: F401
import gradviz.render  # noqa: F401
import gradviz.run  # noqa: F401
import gradviz.sandbox  # noqa: F401

# One thread here, before any torch op: a forkserver that has started OpenMP's thread pool
# forks children whose first parallel region hangs (the pool's threads do not survive a
# fork). Workers choose their own thread count after the fork (sandbox.limit_self).
torch.set_num_threads(1)

with contextlib.suppress(Exception):  # torchviz is optional (the classic view)
    import torchviz  # noqa: F401

# Run the interpreter once, before any limit applies: torch imports parts of itself
# lazily (the FLOP counter's machinery looks for a temporary directory), and a worker
# cannot write files. What this warms up is then shared by every worker. (The size check
# of torch.arange runs PyTorch's Python reference, whose first call imports torch._dynamo:
# about a second that the first visitor would otherwise wait for.)
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
"""
gradviz.run.run_program(WARMUP, gradviz.run.RunOptions())

gc.collect()
gc.freeze()
