"""Names with one leading underscore are the program's own: `_init_weights`, `self._cache`,
`_helper(x)`, `class _Acc:` run as CPython runs them, while PyTorch's and Python's internals
under such names (`m._modules`, `t._version`, `torch._C`, every `__dunder__`) stay refused at
their line and column.

Each program is run by gradviz's interpreter and by CPython with PyTorch in this test
(trusted test text); what they print must be the same.
"""

from __future__ import annotations

import pytest

from tests.same_as_python import printed, python_printed, refused

MODULE = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self._fc = nn.Linear(2, 3)
        self._cache = None
        self._calls = 0
    def _helper(self, x):
        self._calls += 1
        return self._fc(x)
    def forward(self, x):
        self._cache = x
        return self._helper(x)
torch.manual_seed(0)
_net = Net()
print(_net(torch.ones(1, 2)))
print(_net._calls, _net._cache, [n for n, _ in _net.named_parameters()])
print(_net)
"""

PLAIN = """class _Acc:
    _instances = 0
    def __init__(self):
        self._n = _Acc._instances
    def _add(self, k=1):
        self._n += k
        return self._n
    @property
    def _double(self):
        return self._n * 2
a = _Acc()
a._add()
print(a._add(3), a._n, a._double, _Acc._instances)
"""

FUNCTIONS = """def _square(_x, _power=2):
    _result = _x ** _power
    return _result
_table = {"_key": _square(3)}
for _, _v in enumerate([1, 2]):
    _last = _square(_v, 3)
print(_table, _last, [_square(_i) for _i in range(3)], (lambda _: _ + 1)(4))
_private = [1, 2]
del _private[0]
print(_private)
"""

DATACLASS = """from dataclasses import dataclass
@dataclass
class _Config:
    n_embd: int = 8
    _hidden: int = 3
c = _Config(n_embd=4)
c._extra = 5
print(c, c._hidden, c._extra)
"""

CLOSURE = """def _counter():
    _count = 0
    def _step():
        nonlocal _count
        _count += 1
        return _count
    return _step
_next = _counter()
_next()
print(_next(), _next())
"""

# The GPT lecture's initialisation: self.apply(self._init_weights), children first, with
# torch.nn.init at the same seed; then d2l's net.apply(init_weights) and net.apply(print).
GPT_INIT = """import torch
import torch.nn as nn
class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln = nn.LayerNorm(n)
        self.fc = nn.Linear(n, n)
    def forward(self, x):
        return self.fc(self.ln(x))
class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(10, 4)
        self.h = nn.ModuleList([Block(4) for _ in range(2)])
        self.lm_head = nn.Linear(4, 10, bias=False)
        self.apply(self._init_weights)
    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
    def forward(self, idx):
        x = self.wte(idx)
        for block in self.h:
            x = block(x)
        return self.lm_head(x)
torch.manual_seed(1337)
model = GPT()
for name, p in model.named_parameters():
    print(name, p.shape, p.sum().item(), p.std().item())
print(model(torch.tensor([[1, 2]])).shape)
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
net.apply(init_weights)
print(net[0].weight)
net.apply(print)
"""

INITS = """import torch
from torch import nn
torch.manual_seed(0)
w = torch.zeros(3, 5)
nn.init.uniform_(w, -1, 1)
print(w)
nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
print(w)
nn.init.trunc_normal_(w, std=0.02)
nn.init.constant_(w[0], 7.0)
print(w, nn.init.calculate_gain("tanh"))
from torch.nn import init
init.ones_(w)
init.eye_(w)
print(w)
"""


@pytest.mark.parametrize(
    "source",
    [MODULE, PLAIN, FUNCTIONS, DATACLASS, CLOSURE, GPT_INIT, INITS],
    ids=["module", "plain", "functions", "dataclass", "closure", "gpt-init", "inits"],
)
def test_own_underscore_names_run_as_in_python(source):
    assert printed(source) == python_printed(source)


X = "import torch\nx = torch.ones(2, requires_grad=True)\n"
NET = "import torch\nm = torch.nn.Linear(2, 2)\n"


@pytest.mark.parametrize(
    ("source", "kind", "line", "col", "words"),
    [
        (X + "y = x._foo\n", "name", 3, 5, "_foo"),
        (X + "y = x._version\n", "forbidden", 3, 5, "internals"),
        (X + "y = (x * 2).grad_fn._backward_hooks\n", "forbidden", 3, 5, "internals"),
        (X + "y = x.__class__\n", "forbidden", 3, 5, "__"),
        (X + "y = x.__dict__\n", "forbidden", 3, 5, "__"),
        (NET + "y = m._modules\n", "forbidden", 3, 5, "internals"),
        (NET + "y = m._parameters\n", "forbidden", 3, 5, "internals"),
        (NET + "y = m._foo\n", "name", 3, 5, "_foo"),
        ("import torch\ny = torch._C\n", "forbidden", 2, 5, "internals"),
        ("import torch\ny = torch.nn._reduction\n", "forbidden", 2, 5, "internals"),
        ("import math\ny = math._x\n", "forbidden", 2, 5, "internals"),
        ("_5 = 1\n", "forbidden", 1, 1, "line number"),
        ("def f(**k):\n    return k\nf(_x=1)\n", "forbidden", 3, 3, "keyword"),
        ("from torch.nn import _reduction\n", "forbidden", 1, 22, "imported name"),
        (NET + "m.apply(3)\n", "type", 3, 1, "cannot be called"),
        (NET + "torch.nn.init.orthogonal_(m.weight)\n", "name", 3, 1, "not available"),
        (NET + "torch.nn.init._no_grad_normal_(m.weight, 0, 1)\n", "forbidden", 3, 1, "internals"),
        (NET + "f = m.forward\n", "type", 3, 5, "is a method"),
    ],
)
def test_internal_underscore_names_are_refused_at_their_position(source, kind, line, col, words):
    refused(source, kind, line, col, words)


def test_a_module_class_cannot_set_nn_modules_internals():
    source = (
        "import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self._non_persistent_buffers_set = 1\nn = N()\n"
    )
    refused(source, "forbidden", 5, 9, "internals")


def test_a_module_class_cannot_override_nn_modules_private_methods():
    source = (
        "import torch.nn as nn\nclass N(nn.Module):\n    def _apply(self, fn):\n"
        "        return self\n"
    )
    refused(source, "forbidden", 3, 5, "internals")
