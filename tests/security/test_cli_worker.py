"""The command line's one-shot worker (Pool(one_shot=True)): its forkserver imports only torch
and the interpreter (gradviz.program.worker_hooks), not the app's warm-up, so torch's lazily imported
parts (sympy, the FLOP counter, the meta kernels, torchviz) load under the worker's limits.
Each test runs `python -m gradviz` in a fresh process, so a fresh forkserver, as a user's does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gradviz.program.worker_hooks import CANARY

ROOT = Path(__file__).resolve().parents[2]

# Parts of torch a small program loads on first use: the FLOP counter (matmul, a layer's
# forward, conv), decompositions (cross_entropy), the optimizers, the CIFAR-10 sample.
LAZY = """x = torch.rand(2, 3, requires_grad=True)
w = torch.randn(3, 3)
y = F.relu(x @ w + 1)
c = F.conv2d(torch.ones(1, 1, 4, 4), torch.ones(1, 1, 2, 2))
q = F.cross_entropy(y, torch.tensor([0, 1]))
net = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
opt = optim.Adam(net.parameters())
loss = nn.MSELoss()(net(x), torch.zeros(2, 2)) + q + c.sum()
loss.backward()
opt.step()
images, labels = gradviz_cifar10_sample(4)
"""


def gradviz(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "GRADVIZ_SANDBOX"}
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run(
        [sys.executable, "-m", "gradviz", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )


def test_the_flop_cap_holds_in_the_cli_worker(tmp_path):
    """The canary's FLOP count is the worker's first use of the FLOP counter (and of sympy),
    under RLIMIT_FSIZE=0: refused, with its line and column, not run unmeasured."""
    prog = tmp_path / "canary.py"
    prog.write_text(CANARY, encoding="utf-8")
    proc = gradviz(["run", str(prog), "--json"], tmp_path)
    assert proc.returncode == 1, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["kind"] == "limit" and "floating-point operations" in error["message"]
    assert (error["line"], error["col"]) == (2, 5)
    proc = gradviz(["render", str(prog), "-o", "g.svg"], tmp_path)
    assert proc.returncode == 1 and f"{prog}:2:5: limit: `a @ a`" in proc.stderr
    assert "<svg" in (tmp_path / "g.svg").read_text(encoding="utf-8")  # what did run


def test_torchs_lazy_parts_load_under_the_cli_workers_limits(tmp_path):
    prog = tmp_path / "lazy.py"
    prog.write_text(LAZY, encoding="utf-8")
    proc = gradviz(["run", str(prog), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    out = json.loads(proc.stdout)
    assert out["error"] is None
    assert {"x", "loss", "images"} <= {t["name"] for t in out["tensors"]}


def test_the_classic_view_renders_from_the_cli_worker(tmp_path):
    """torchviz is imported in the worker, under its limits, only for --view classic."""
    prog = tmp_path / "p.py"
    prog.write_text("x = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\n", "utf-8")
    proc = gradviz(["render", str(prog), "-o", "c.svg", "--view", "classic"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "<svg" in (tmp_path / "c.svg").read_text(encoding="utf-8")
