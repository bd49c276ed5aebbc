"""`from <module> import <name>` as lessons write it: each name is what its dotted form reads
(`from math import sqrt` is `math.sqrt`), a program prints what CPython prints, and a name
the module's table lacks is refused at its line and column with the name it probably meant."""

from __future__ import annotations

import pytest

from tests.same_as_python import printed, python_printed, refused

PROGRAMS = {
    "math-names": "from math import sqrt, exp, pi\nprint(sqrt(4.0), exp(0), pi)",
    "time-name": "from time import perf_counter\nt = perf_counter()\nprint(perf_counter() >= t)",
    "random-names": "from random import randint, seed\nseed(0)\nprint(randint(0, 10))",
    "torch-names": "from torch import nn, optim, Tensor, tensor, zeros\n"
    "def double(x: Tensor) -> Tensor:\n    return x * 2\n"
    "print(double(tensor([1.0, 2.0])), zeros(2), isinstance(zeros(1), Tensor))\n"
    "print(nn.Linear(2, 1).weight.shape, optim.SGD([torch.ones(1)], lr=0.1) is not None)",
    "tensor-class-called": "from torch import Tensor\nfrom torch import Tensor as T\n"
    "print(Tensor([1.0, 2.0]), Tensor([[1, 2]]).dtype, T([3]).shape, Tensor().shape)\n"
    "print(Tensor(2, 1).shape, isinstance(T([1]), Tensor))",
    "grad-modes-with": "from torch import no_grad, enable_grad, inference_mode\n"
    "x = torch.ones(2, requires_grad=True)\nwith no_grad():\n    a = x * 2\n"
    "    with enable_grad():\n        b = x * 2\nwith inference_mode():\n    c = x * 2\n"
    "    print(torch.is_grad_enabled())\n"
    "print(a.requires_grad, b.requires_grad, c, c.requires_grad, torch.is_grad_enabled())",
    "grad-modes-decorators": "from torch import no_grad, enable_grad\n"
    "from torch import inference_mode as im\nx = torch.ones(2, requires_grad=True)\n"
    "@no_grad()\ndef f(t):\n    return t * 2\n@no_grad\ndef g(t):\n    return t * 3\n"
    "@im()\ndef h(t):\n    return t * 4\nclass Model:\n    @no_grad()\n"
    "    def step(self, t):\n        return t + 1\n    @enable_grad()\n"
    "    def grad(self, t):\n        return t + 2\nm = Model()\n"
    "print(f(x).requires_grad, g(x).requires_grad, h(x), m.step(x).requires_grad)\n"
    "with no_grad():\n    print(m.grad(x).requires_grad)\nprint(torch.is_grad_enabled())",
    "functional-as-F": "from torch.nn import functional as F\nimport torch.nn.functional as G\n"
    "print(F.relu(torch.tensor([-1.0, 2.0])), G.relu(torch.tensor([3.0])))",
    "import-as": "import torch.nn as nn\nimport torch.nn.functional as F\n"
    "print(nn.Linear(3, 1).weight.shape, F.softmax(torch.zeros(2), dim=0))",
    "module-base": "from torch.nn import Module, Linear\ntorch.manual_seed(0)\n"
    "class Net(Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = Linear(3, 1)\n    def forward(self, x):\n        return self.fc(x)\n"
    "net = Net()\nprint(net)\nprint(isinstance(net, Module), net(torch.ones(1, 3)).shape)",
    "module-base-renamed": "from torch.nn import Module as Base\n"
    "class Net(Base):\n    def forward(self, x):\n        return x + 1\n"
    "print(Net()(torch.zeros(2)))",
    "dataset-base": "from torch.utils.data import DataLoader, TensorDataset, Dataset\n"
    "class Pairs(Dataset):\n    def __init__(self, n):\n        self.n = n\n"
    "    def __len__(self):\n        return self.n\n"
    "    def __getitem__(self, i):\n        return torch.ones(2) * i, i\n"
    "for xb, yb in DataLoader(Pairs(4), batch_size=2):\n    print(xb, yb)\n"
    "ds = TensorDataset(torch.arange(4.0), torch.arange(4))\nprint(len(ds), ds[1])",
    "optimizers": "from torch.optim import SGD, Adam\nw = torch.ones(2, requires_grad=True)\n"
    "opt = SGD([w], lr=0.5)\n(w * w).sum().backward()\nopt.step()\nprint(w)\n"
    "opt = Adam([w], lr=0.1)\n(w * w).sum().backward()\nopt.step()\nprint(w)",
    "typing-annotations": "from typing import List, Optional, Tuple, Dict\n"
    "def first(xs: List[int], d: Optional[Dict[str, int]] = None) -> Tuple[int, int]:\n"
    "    return xs[0], len(xs)\nprint(first([4, 5]), List)",
    "annotated-names": "from typing import List, Optional\nlosses: List[float] = []\n"
    "best: Optional[float] = None\ndef step(x: float) -> float:\n    y: float = x * 2\n"
    "    return y\nfor i in range(3):\n    losses.append(step(i))\n"
    "count: int = len(losses)\nprint(losses, best, count)",
    "dataclass-typing": "from dataclasses import dataclass, field\nfrom typing import List\n"
    "@dataclass\nclass Config:\n    sizes: List[int] = field(default_factory=list)\n"
    "    lr: float = 0.1\nprint(Config(), Config([2]).sizes)",
    "numpy-names": "from numpy import array, zeros\nprint(array([1, 2]), zeros(2))",
    "numpy-submodules": "from numpy.random import default_rng\nfrom numpy.linalg import inv, norm\n"
    "import numpy.random as npr\nfrom numpy import linalg\nrng = default_rng(0)\n"
    "print(rng.random(2), npr.default_rng(1).integers(0, 5, 3), norm([3.0, 4.0]))\n"
    "print(inv([[2.0, 0.0], [0.0, 4.0]]), linalg.det([[1.0, 2.0], [3.0, 4.0]]))",
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_from_imports_print_what_python_prints(name):
    source = PROGRAMS[name]
    assert printed(source) == python_printed(source)


@pytest.mark.parametrize(
    ("source", "kind", "line", "col", "words"),
    [
        ("from math import sqrtt", "name", 1, 18, ["`math.sqrtt` is not available"]),
        ("from torch.nn import Linear, Modul", "name", 1, 30, ["`torch.nn.Modul`"]),
        ("from typing import Lst", "name", 1, 20, ["`typing.Lst`"]),
        ("from numpy import load", "name", 1, 19, ["cannot read or write files"]),
        ("from numpy.linalg import eig", "name", 1, 26, ["`numpy.linalg.eig` is not"]),
        ("from numpy.random import RandomState", "name", 1, 26, ["not available"]),
        ("from torch import save", "name", 1, 19, ["cannot write files"]),
        ("from torch.utils.data import *", "forbidden", 1, 1, ["name what you need"]),
        ("from os import path", "forbidden", 1, 1, ["`os` is not available"]),
        ("from torch import _C", "forbidden", 1, 19, ["underscore"]),
        ("from typing import List\nList(3)", "type", 2, 1, ["cannot be called"]),
        ("from typing import List\nx = [List]", "type", 2, 6, ["cannot hold typing.List"]),
        ("from torch import tensor as F", "forbidden", 1, 1, ["cannot name torch.tensor"]),
        (
            "from torch import no_grad\ndef no_grad():\n    return 1\n@no_grad\ndef f():\n"
            "    return 2",
            "type",
            4,
            2,
            ["`no_grad` is a function, not torch.no_grad", "cannot decorate"],
        ),
        (
            "from torch import enable_grad as eg\neg = [1]\nwith eg():\n    pass",
            "type",
            3,
            6,
            ["`eg` is a list, not torch.no_grad", "cannot open a `with` block"],
        ),
        ("from torch import no_grad\nwith no_grad(1):\n    pass", "forbidden", 2, 6, ["`with`"]),
        ("from torch import no_grad as ng\nx = ng()", "type", 2, 5, ["is used as `with"]),
    ],
)
def test_names_the_tables_lack_are_refused_at_their_place(source, kind, line, col, words):
    refused(source, kind, line, col, *words)


def test_a_misspelt_name_gets_a_suggestion():
    assert refused("from math import sqrtt", "name", 1, 18).hint == "Did you mean `sqrt`?"
    err = refused("from torch.nn import Modul", "name", 1, 22)
    assert err.hint == "Did you mean `Module`?"
