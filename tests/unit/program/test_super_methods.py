"""`super().name(...)` in a class's methods (the base's method, found from the class the
method is written in, on its first argument) and `dataclasses.field(default=...)` /
`field(default_factory=...)`: what CPython prints for the same text (trusted test text),
and the refusals at their line and column."""

from __future__ import annotations

import pytest

from tests.same_as_python import printed, python_printed, refused

CHAIN = """class A:
    def __init__(self, n):
        self.n = n
    def f(self, x):
        return x + self.n
    def __repr__(self):
        return f"A({self.n})"
class B(A):
    def f(self, x):
        return super().f(x) * 10
    def __repr__(self):
        return "B:" + super().__repr__()
class C(B):
    def f(self, x):
        return super(C, self).f(x) + 1
c = C(2)
print(c.f(1), c, B(5), A(1).f(1))
"""

KINDS = """class Base:
    SCALE = 3
    def __init__(self):
        self.v = 1
    @staticmethod
    def helper(x):
        return x * 2
    @classmethod
    def name(cls):
        return "base"
    @property
    def size(self):
        return self.v + 10
class Child(Base):
    def helper2(self, x):
        return super().helper(x) + 1
    def both(self):
        return super().name(), self.size
    def scale(self):
        return self.SCALE
c = Child()
print(c.helper2(4), c.both(), c.scale())
"""

STR = """class P:
    def __str__(self):
        return "P!"
class Q(P):
    def __str__(self):
        return super().__str__() + "?"
class R:
    def __str__(self):
        return "R:" + super().__str__()
    def __repr__(self):
        return "r"
print(Q(), str(Q()), R())
"""

MODULE = """import torch
import torch.nn as nn
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
    def describe(self):
        return super().__repr__()
    def flip(self):
        super().train(False)
        return self.training
torch.manual_seed(0)
m = Base()
print(m.describe())
print(m(torch.ones(1, 2)), m.flip(), m.training)
"""

OVERRIDE = """class Layer:
    def __init__(self, w):
        self.w = w
    def forward(self, x):
        return x * self.w
    def __call__(self, x):
        return self.forward(x)
class Shifted(Layer):
    def __init__(self, w, b):
        super().__init__(w)
        self.b = b
    def forward(self, x):
        return super().forward(x) + self.b
class Twice(Shifted):
    def forward(self, x):
        y = super().forward(x)
        return super().forward(y)
print(Layer(2)(3), Shifted(2, 1)(3), Twice(2, 1)(3))
"""

FIELDS = """from dataclasses import dataclass, field
@dataclass
class Cfg:
    n: int
    layers: list = field(default_factory=list)
    table: dict = field(default_factory=dict)
    p: float = field(default=0.5)
    name: str = "x"
a = Cfg(1)
b = Cfg(2, [3])
a.layers.append(7)
print(a, b, Cfg(3), Cfg.p, Cfg(4).layers is Cfg(4).layers)
def make():
    return [0] * 3
@dataclass
class G:
    z: list = field(default_factory=make)
    c: Cfg = field(default_factory=lambda: Cfg(9))
print(G())
"""


@pytest.mark.parametrize(
    "source",
    [CHAIN, KINDS, STR, MODULE, OVERRIDE, FIELDS],
    ids=["chain", "kinds", "str", "module", "override", "fields"],
)
def test_super_methods_and_fields_run_as_in_python(source):
    assert printed(source) == python_printed(source)


M = "import torch.nn as nn\n"
F = "from dataclasses import dataclass, field\n"


@pytest.mark.parametrize(
    ("source", "kind", "line", "col", "words"),
    [
        ("class A:\n    def f(self):\n        return super().g()\nA().f()\n",
         "name", 3, 16, "'super' object has no attribute 'g'"),
        ("class A:\n    def f(self):\n        return super().__class__\n",
         "forbidden", 3, 16, "super"),
        ("class A:\n    def f(self):\n        return super().__dict__()\n",
         "forbidden", 3, 16, "__"),
        ("class A:\n    def f(self):\n        return super()._x()\nA().f()\n",
         "name", 3, 16, "'super' object"),
        ("class A:\n    def f(self):\n        return super(int, self).f()\n",
         "forbidden", 3, 16, "super(A, self)"),
        ("def f():\n    return super().g()\n", "forbidden", 2, 12, "super"),
        ("class A:\n    def f(self):\n        g = lambda: super().f()\n",
         "forbidden", 3, 21, "super"),
        (M + "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "    def forward(self, x):\n        return super().forward(x)\nN()(1)\n",
         "runtime", 6, 16, "missing the required"),
        (F + "@dataclass\nclass C:\n    a: list = field(default=[])\n",
         "runtime", 4, 5, "mutable default"),
        (F + "@dataclass\nclass C:\n    a: list = field(list)\n", "type", 4, 15, "positional"),
        (F + "@dataclass\nclass C:\n    a: int = field(default=1, default_factory=int)\n",
         "runtime", 4, 14, "both"),
        (F + "@dataclass\nclass C:\n    a: int = field(init=False)\n", "type", 4, 14, "init"),
        (F + "@dataclass\nclass C:\n    a: list = field(default_factory=torch)\n",
         "type", 4, 15, "function"),
    ],
)  # fmt: skip
def test_super_and_field_refusals_at_their_position(source, kind, line, col, words):
    refused(source, kind, line, col, words)
