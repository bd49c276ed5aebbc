"""torch.autograd.functional's jacobian, hessian, vjp and jvp of a program's own function
(a def or a lambda, run by the interpreter under the run's caps) or one of torch's, and
anomaly detection accepted with a note: what CPython with PyTorch prints for the same text
(trusted test text), and the refusals at their line and column."""

from __future__ import annotations

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.objects.functional import ANOMALY_NOTE
from gradviz.program.results.trace import RunOptions
from tests.same_as_python import printed, python_printed, refused

HEAD = "import torch\nx = torch.tensor([1.0, 2.0, 3.0])\n"

PROGRAMS = {
    "jacobian-def": HEAD
    + "from torch.autograd.functional import jacobian\n"
    + "def f(t):\n    return t ** 2 + 3 * t\nprint(jacobian(f, x))\n",
    "jacobian-lambda-dotted": HEAD
    + "print(torch.autograd.functional.jacobian(lambda t: t.sin() * t, x))\n",
    "jacobian-two-inputs": HEAD
    + "from torch.autograd.functional import jacobian\n"
    + "def g(a, b):\n    return a * b, a + b\n"
    + "print(jacobian(g, (x, torch.ones(3))))\n",
    "jacobian-create-graph": HEAD
    + "import torch.autograd.functional as AF\n"
    + "J = AF.jacobian(lambda t: t ** 3, x, create_graph=True)\nprint(J, J.requires_grad)\n",
    "jacobian-strict": HEAD
    + "from torch.autograd.functional import jacobian\n"
    + "print(jacobian(lambda t: t * 2, x, strict=True))\n",
    "jacobian-torch-function": HEAD + "print(torch.autograd.functional.jacobian(torch.exp, x))\n",
    "jacobian-matrix": "import torch\nfrom torch.autograd.functional import jacobian\n"
    + "torch.manual_seed(0)\nW = torch.randn(2, 3)\n"
    + "def layer(v):\n    return torch.tanh(W @ v)\nprint(jacobian(layer, torch.ones(3)))\n",
    "jacobian-of-a-model": HEAD
    + "from torch.autograd.functional import jacobian\nimport torch.nn as nn\n"
    + "torch.manual_seed(0)\nlayer = nn.Linear(3, 2)\nprint(jacobian(layer, x))\n"
    + "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    + "        self.fc = nn.Linear(3, 1)\n    def forward(self, t):\n"
    + "        return torch.tanh(self.fc(t))\n    def energy(self, t):\n"
    + "        return self(t).sum()\nnet = Net()\n"
    + "print(jacobian(net, x), jacobian(net.energy, x))\n",
    "hessian": HEAD
    + "from torch.autograd.functional import hessian\n"
    + "def energy(t):\n    return (t ** 3).sum() + t[0] * t[1]\nprint(hessian(energy, x))\n",
    "hessian-two-inputs": HEAD
    + "from torch.autograd.functional import hessian\n"
    + "print(hessian(lambda a, b: (a * b).sum() ** 2, (x, torch.ones(3))))\n",
    "vjp": HEAD
    + "from torch.autograd.functional import vjp\n"
    + "out, g = vjp(lambda t: t ** 2, x, torch.ones(3))\nprint(out, g)\n",
    "vjp-scalar": HEAD
    + "from torch.autograd.functional import vjp\nprint(vjp(lambda t: t.sum(), x))\n",
    "jvp": HEAD
    + "from torch.autograd.functional import jvp\n"
    + "print(jvp(lambda t: t.exp(), x, torch.tensor([1.0, 0.0, 0.0])))\n",
    "jacobian-in-a-loop": HEAD
    + "from torch.autograd.functional import jacobian\n"
    + "for k in range(1, 3):\n    print(jacobian(lambda t: t ** k, x).diagonal())\n",
    "anomaly": HEAD
    + "torch.autograd.set_detect_anomaly(True)\n"
    + "with torch.autograd.detect_anomaly():\n    y = (x * 2).sum()\nprint(y)\n"
    + "torch.autograd.set_detect_anomaly(False)\n",
}


@pytest.fixture(scope="module", autouse=True)
def _flop_counter_loaded():
    """The first matrix product of a process loads the FLOP counter, which takes seconds on
    a busy machine, inside the run's wall-time cap: loaded once here, before the runs."""
    run_program("import torch\ny = torch.ones(2) @ torch.ones(2)\n", RunOptions())


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("source", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_functional_calls_print_as_in_python(source):
    assert printed(source) == python_printed(source)


def test_anomaly_detection_is_noted_once():
    source = HEAD + "torch.autograd.set_detect_anomaly(True)\n"
    source += "with torch.autograd.detect_anomaly():\n    y = x * 2\n"
    trace = run_program(source, RunOptions(simulate_cuda=False))
    assert trace.error is None
    notes = [w for w in trace.warnings if w.message == ANOMALY_NOTE]
    assert len(notes) == 1 and notes[0].line == 3


J = HEAD + "from torch.autograd.functional import jacobian, hessian\n"


@pytest.mark.parametrize(
    ("source", "kind", "line", "col", "words"),
    [
        (J + "jacobian(lambda t: t, x, vectorize=True)\n", "forbidden", 4, 1, "vmap"),
        (J + 'jacobian(lambda t: t, x, strategy="forward-mode")\n', "forbidden", 4, 1, "forward"),
        (J + "jacobian(print, x)\n", "type", 4, 1, "function"),
        (J + "jacobian(lambda t: t, [x])\n", "type", 4, 1, "tuple of tensors"),
        (J + "jacobian(lambda t: 3, x)\n", "type", 4, 1, "returned a int"),
        (J + "jacobian(lambda t: t, torch.ones(2000))\n", "limit", 4, 1, "2,000 values"),
        (J + "hessian(lambda t: t.sum(), torch.ones(300))\n", "limit", 4, 1, "300 values"),
        (J + "jacobian(lambda t: t.repeat(2000), x)\n", "limit", 4, 1, "6,000 values"),
        (J + "jacobian(lambda t: t, x, unknown=1)\n", "type", 4, 1, "unexpected keyword"),
        (J + "def f(t):\n    t.sum().backward()\n    return t\njacobian(f, x)\n",
         "forbidden", 5, 5, "inside a hook"),
        (J + "def f(t):\n    while True:\n        pass\njacobian(f, x)\n", "limit", 5, 5, "loop"),
        (J + "jacobian(lambda t: torch.ones(100000, 100000), x)\n", "limit", 4, 20, "allocate"),
        (J + "jacobian(lambda t: jacobian(lambda u: u, t), x)\n", "forbidden", 4, 20, "inside"),
        (J + "y = x.clone().requires_grad_()\nh = y.register_hook(lambda g: jacobian(lambda t: t, x))\n"
         "y.sum().backward()\n", "forbidden", 5, 31, "inside a hook"),
        (J + "def f(t):\n    for i in range(1000):\n        t = t * 1.0\n    return t\n"
         "jacobian(f, torch.ones(1000))\n", "limit", 8, 1, "backward passes"),
        (J + "torch.autograd.set_detect_anomaly(1)\n", "type", 4, 1, "True or False"),
        (J + "d = torch.autograd.detect_anomaly()\n", "type", 4, 5, "with"),
    ],
)  # fmt: skip
def test_functional_refusals_at_their_position(source, kind, line, col, words):
    refused(source, kind, line, col, words)
