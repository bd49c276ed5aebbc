"""Real-GPU check of the language's newest autograd surface: tensor hooks (autograd may call
them on its CUDA device thread), grad_fn walking, lazy layers, try/except around a device error.

Each program runs on the real GPU and on simulated CUDA; the output says whether they agree.
    python bench/gpu_language_check.py    (on a machine with a CUDA GPU; results: docs/gpu/)
"""

import sys
import threading
import time

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "src"))
import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

print(
    "torch",
    torch.__version__,
    "cuda",
    torch.cuda.is_available(),
    torch.cuda.get_device_name(0) if torch.cuda.is_available() else "",
)
CASES = {
    "hook-print": "x = torch.ones(3, requires_grad=True, device='cuda')\nh = x.register_hook(lambda g: print(g))\ny = (x * 2).sum()\ny.backward()\nprint(x.grad)\n",
    "hook-double": "x = torch.ones(3, requires_grad=True, device='cuda')\nh = x.register_hook(lambda g: g * 2)\ny = (x * 3).sum()\ny.backward()\nprint(x.grad)\n",
    "hook-def-loop": "def show(g):\n    print('grad', g.sum().item())\n    return None\nw = torch.randn(4, 4, device='cuda', requires_grad=True)\nh = w.register_hook(show)\nfor i in range(3):\n    loss = (w @ w).sum()\n    loss.backward()\n",
    "hook-no-grad-mode-kept": "x = torch.ones(2, requires_grad=True, device='cuda')\ndef f(g):\n    y = g * 1\n    print(y.requires_grad)\n    return g\nh = x.register_hook(f)\n(x * x).sum().backward()\nz = x * 2\nprint(z.requires_grad)\n",
    "grad-fn-walk": "a = torch.ones(2, requires_grad=True, device='cuda')\nb = (a * 3).sum()\nprint(b.grad_fn.name())\nprint(b.grad_fn.next_functions[0][0].name())\n",
    "lazy": "import torch.nn as nn\nnet = nn.LazyLinear(4).to('cuda')\ny = net(torch.ones(2, 3, device='cuda'))\nprint(y.shape, y.device)\n",
    "try-mismatch": "a = torch.ones(2, device='cuda')\nb = torch.ones(2)\ntry:\n    c = a + b\nexcept RuntimeError as e:\n    print('caught', str(e)[:60])\n",
}
bad = 0
for name, src in CASES.items():
    t = time.perf_counter()
    tr = run_program(src, RunOptions(classic=False, simulate_cuda=False))
    err = None if tr.error is None else f"{tr.error.kind}: {tr.error.message[:200]}"
    print(f"== {name} ({time.perf_counter() - t:.2f} s) error={err}")
    for line in tr.stdout:
        print("   ", line[:200])
    bad += err is not None
    sim = run_program(src, RunOptions(classic=False, simulate_cuda=True))
    same = sim.stdout == tr.stdout and (sim.error is None) == (tr.error is None)
    print("    simulated gives the same output:", same)
    if not same:
        print("    simulated:", sim.stdout, None if sim.error is None else sim.error.message[:200])
print("threads alive:", threading.active_count(), "failures:", bad)
