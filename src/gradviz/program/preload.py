"""What the app's forkserver imports once, before it forks any worker
(gradviz.workers.table.PRELOAD): the worker's hooks and jobs (gradviz.program.worker_hooks), torchviz,
and a warm-up run of the interpreter, so a worker starts warm (a fork, not an import, when a
visitor runs a program).

Then it freezes the garbage collector's view of those objects (gc.freeze), so workers do not
copy the forkserver's memory pages merely by collecting garbage: their pages stay shared, which
keeps the proportional set size of the whole app down. The command line runs one program per
process and does without this (table.CLI_PRELOAD).
"""

from __future__ import annotations

import contextlib
import gc

from gradviz.program import worker_hooks as worker  # noqa: F401 - the hooks, one torch thread, the temp dir
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

with contextlib.suppress(Exception):  # torchviz is optional (the classic view)
    import torchviz  # noqa: F401

# Run the interpreter once, before any limit applies: torch imports parts of itself
# lazily (sympy and torch._dynamo, for the FLOP counter and the meta kernels), about a
# second a visitor would otherwise wait for. What this warms up is then shared by every
# worker. (The size check
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
