"""Plain classes, dataclasses and a program's own dataset: tutorials' helper classes (d2l's
Accumulator and Timer, makemore's ModelConfig, a Dataset read by a DataLoader) run as written.

Each program is run by gradviz's interpreter and by real Python with real PyTorch in this
test (trusted test text: `exec` of the test's own programs, never the product's); what
they print must be the same.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.same_as_python import printed

ACCUMULATOR = 'class Accumulator:\n    """Sum over n variables."""\n    def __init__(self, n):\n        self.data = [0.0] * n\n\n    def add(self, *args):\n        self.data = [a + float(b) for a, b in zip(self.data, args)]\n\n    def reset(self):\n        self.data = [0.0] * len(self.data)\n\n    def __getitem__(self, idx):\n        return self.data[idx]\n\n    def __len__(self):\n        return len(self.data)\n\nacc = Accumulator(3)\nacc.add(1, 2, 3)\nacc.add(1, 2.5, 3)\nacc.data[0] += 1\nprint(acc[0], acc[1], len(acc), acc.data)\nprint(isinstance(acc, Accumulator), isinstance(acc, int))\nacc.reset()\nprint(acc.data)\n'

DATACLASS = 'from dataclasses import dataclass\n\n@dataclass\nclass ModelConfig:\n    block_size: int = None\n    vocab_size: int = None\n    n_layer: int = 4\n    n_embd: int = 64\n    name: str = "mlp"\n\ncfg = ModelConfig(vocab_size=27, block_size=3)\ncfg.n_embd = 32\nprint(cfg)\nprint(cfg.n_embd * 2, cfg.vocab_size)\nc2 = ModelConfig(8, 27, 2)\nprint(c2)\n\n@dataclass\nclass Point:\n    x: float\n    y: float = 0.0\nprint(Point(1.5), Point(y=2, x=1))\n\n'

INHERITANCE = 'class Base:\n    KIND = "base"\n    def __init__(self, a):\n        self.a = a\n    def describe(self):\n        return f"{self.KIND}:{self.a}"\n    def __repr__(self):\n        return f"{type_of(self)}({self.a})"\n\ndef type_of(o):\n    return "B"\n\nclass Child(Base):\n    KIND = "child"\n    def __init__(self, a, b):\n        super().__init__(a)\n        self.b = b\n    @property\n    def total(self):\n        return self.a + self.b\n    @staticmethod\n    def twice(x):\n        return 2 * x\n    @classmethod\n    def make(cls, n):\n        return cls(n, n)\n    def __call__(self, x):\n        return x * self.total\n    def __iter__(self):\n        return iter([self.a, self.b])\n    def __str__(self):\n        return "Child with " + str(self.total)\n\nc = Child.make(3)\nprint(c.describe(), c.total, c.twice(4), Child.twice(5), c(2))\nprint(c, repr(c), [c])\nprint(list(c), isinstance(c, Base), isinstance(c, Child), isinstance(Base(1), Child))\nfor v in c:\n    print(v)\nprint(Child.KIND, Base.KIND, c.KIND)\n\n'

TIMER = "class Timer:\n    def __init__(self):\n        self.times = []\n        self.start()\n    def start(self):\n        self.tik = 0\n    def stop(self):\n        self.times.append(self.tik + len(self.times) + 1.5)\n        return self.times[-1]\n    def avg(self):\n        return sum(self.times) / len(self.times)\n    def sum(self):\n        return sum(self.times)\n    def cumsum(self):\n        out = []\n        total = 0\n        for t in self.times:\n            total += t\n            out.append(total)\n        return out\n\ntimer = Timer()\nfor i in range(3):\n    timer.stop()\nprint(timer.avg(), timer.sum(), timer.cumsum(), f'{timer.avg():.2f} sec')\nclass Empty(object):\n    pass\ne = Empty()\ne.x = 3\nprint(e.x)\n"

MODULE_DECORATORS = "import torch\nfrom torch import nn\n\nclass Scaled(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.fc = nn.Linear(n, 1)\n        self.n = n\n\n    @property\n    def width(self):\n        return self.n * 2\n\n    @staticmethod\n    def square(x):\n        return x * x\n\n    @classmethod\n    def small(cls):\n        return cls(2)\n\n    def forward(self, x):\n        return self.square(self.fc(x))\n\ntorch.manual_seed(0)\nnet = Scaled.small()\nprint(net.width, Scaled.square(3), net.square(4), isinstance(net, Scaled))\nprint(net(torch.ones(1, 2)).shape)\n"

DATASET = "import torch\nfrom torch.utils.data import DataLoader\n\nclass Squares:\n    def __init__(self, n):\n        self.x = torch.arange(n, dtype=torch.float32).reshape(n, 1)\n        self.y = self.x ** 2\n    def __len__(self):\n        return len(self.x)\n    def __getitem__(self, i):\n        return self.x[i], self.y[i], i\n\ntorch.manual_seed(0)\nds = Squares(10)\nloader = DataLoader(ds, batch_size=4, shuffle=True)\nprint(len(loader), loader.batch_size)\nfor xb, yb, ib in loader:\n    print(xb.shape, yb.flatten(), ib)\nfor xb, yb, ib in DataLoader(ds, batch_size=3, drop_last=True):\n    print(ib)\nprint(torch.rand(1))\n"


WRAPPED = 'import torch\nfrom torch.utils.data import DataLoader\n\nclass WrappedDataLoader:\n    def __init__(self, dl, func):\n        self.dl = dl\n        self.func = func\n    def __len__(self):\n        return len(self.dl)\n    def __iter__(self):\n        return iter([self.func(b) for b in self.dl])\n\nclass Pairs:\n    def __init__(self, n):\n        self.x = torch.arange(n * 2.0).reshape(n, 2)\n        self.y = torch.arange(n)\n    def __len__(self):\n        return self.y.shape[0]\n    def __getitem__(self, i):\n        return {"x": self.x[i], "y": self.y[i].item(), "name": "row"}\n\ndef preprocess(batch):\n    return batch["x"] * 2, batch["y"], batch["name"]\n\ndl = WrappedDataLoader(DataLoader(Pairs(5), batch_size=2), preprocess)\nprint(len(dl))\nfor xb, yb, names in dl:\n    print(xb, yb, names)\n'


def python_printed(source: str) -> list[str]:
    env: dict = {"torch": torch, "F": F, "nn": nn, "__name__": "__main__"}
    out = io.StringIO()
    with torch.random.fork_rng(), contextlib.redirect_stdout(out):
        torch.manual_seed(0)
        exec(compile(source, "<test>", "exec"), env)
    return out.getvalue().splitlines()


@pytest.mark.parametrize(
    "source",
    [ACCUMULATOR, DATACLASS, INHERITANCE, TIMER, MODULE_DECORATORS, DATASET, WRAPPED],
    ids=[
        "accumulator",
        "dataclass",
        "inheritance",
        "timer",
        "module-decorators",
        "dataset",
        "wrapped-loader-dict-items",
    ],
)
def test_prints_as_python(source):
    assert printed(source) == python_printed(source)


SELF_HOLDING = """\
from dataclasses import dataclass

@dataclass
class Node:
    value: int = 0
    next: object = None

a = Node(1)
a.next = a
print(a)
head = Node(0)
for i in range(100):
    head = Node(i, head)
print(len(repr(head)) > 100)
"""


def test_a_dataclass_inside_itself_prints_as_python():
    assert printed(SELF_HOLDING) == python_printed(SELF_HOLDING)


TRUTH = """\
class Bag:
    def __init__(self):
        self.items = []
    def __len__(self):
        return len(self.items)
class Plain:
    pass
b = Bag()
print(bool(b), "yes" if b else "no")
b.items.append(1)
print(bool(b), not b, bool(Plain()))
"""


def test_truth_of_an_instance_is_its_len_as_in_python():
    assert printed(TRUTH) == python_printed(TRUTH)


EQUALITY = 'from dataclasses import dataclass\n@dataclass\nclass Cfg:\n    n: int = 1\n    name: str = "a"\nclass A:\n    pass\na = A()\nprint(a == a, a == A(), a != A(), A == A, Cfg() == Cfg(), Cfg(2) == Cfg(), Cfg() != Cfg(n=1), Cfg() == 1, a in [a], a is a)\n'


def test_equality_of_instances_and_dataclasses_as_in_python():
    assert printed(EQUALITY) == python_printed(EQUALITY)


OLD_PROTOCOL = 'import torch\nclass Seq:\n    def __init__(self, n):\n        self.items = list(range(n))\n    def __getitem__(self, i):\n        return self.items[i] * 10\nclass Rows:\n    def __init__(self):\n        self.x = torch.arange(6).reshape(3, 2)\n    def __getitem__(self, i):\n        return self.x[i]\nclass Own:\n    def __getitem__(self, i):\n        if i >= 2:\n            raise IndexError("done")\n        return i\nprint(list(Seq(3)), [r.sum().item() for r in Rows()], list(Own()))\nfor v in Seq(2):\n    print(v)\nit = iter(Seq(1))\nprint(next(it), next(it, "end"))\n'


def test_an_instance_with_getitem_only_iterates_until_index_error():
    assert printed(OLD_PROTOCOL) == python_printed(OLD_PROTOCOL)


def test_a_cap_inside_getitem_is_not_the_end_of_iteration():
    source = (
        "class A:\n    def __getitem__(self, i):\n        return self[i]\nfor v in A():\n    pass\n"
    )
    err = run_program(source, RunOptions(simulate_cuda=False)).error
    assert err is not None and err.kind == "limit" and "call depth" in err.message, err


def test_a_plain_instance_prints_as_python_prints_it_at_an_address_of_the_runs_own():
    source = "class A:\n    pass\na, b = A(), A()\nprint(a, b, [a])"
    shown = "<__main__.A object at 0x7f2000000040> <__main__.A object at 0x7f2000000080>"
    assert printed(source) == [f"{shown} [<__main__.A object at 0x7f2000000040>]"]
    assert printed(source) == printed(source)  # the same on every run


@pytest.mark.parametrize(
    ("source", "kind", "line", "col", "words"),
    [
        ("x = torch.ones(1)\nx.grad += 1\n", "type", 2, 1, "works on `t.data`"),
        ("x = torch.ones(1)\nx.data = 1\n", "type", 2, 1, "grad"),
        ("class A:\n    pass\nA.k = 1\n", "type", 3, 1, "cannot be set"),
        ("class A:\n    pass\nn = len(A())\n", "type", 3, 5, "has no len()"),
        ("class A:\n    pass\nb = A()(1)\n", "type", 3, 5, "not callable"),
        ("class A:\n    pass\nb = A().x\n", "name", 3, 5, "no attribute 'x'"),
        (
            "class A:\n    def __len__(self):\n        return -1\nn = len(A())\n",
            "runtime",
            4,
            5,
            ">= 0",
        ),
        (
            "class A:\n    def __init__(self, a):\n        pass\nclass B(A):\n    pass\nb = B()\n",
            "type",
            6,
            5,
            "missing 1 required",
        ),
        (
            "from dataclasses import dataclass\n@dataclass\nclass C:\n    a: int\n    b: int = 1\nc = C(b=2)\n",
            "type",
            6,
            5,
            "missing 1 required positional argument: 'a'",
        ),
        (
            "from dataclasses import dataclass\n@dataclass\nclass C:\n    a: int = 1\nc = C(1, 2)\n",
            "type",
            5,
            5,
            "takes 2 positional arguments but 3",
        ),
        (
            "from dataclasses import dataclass\n@dataclass\nclass C:\n    a: int = 1\n    b: int\n",
            "type",
            5,
            5,
            "non-default argument 'b'",
        ),
        (
            "class A:\n    def __init__(self):\n        super().__init__(1)\na = A()\n",
            "type",
            3,
            9,
            "object.__init__()",
        ),
        ("class N(nn.Module):\n    pass\nclass B(N):\n    pass\n", "forbidden", 3, 9, "as a layer"),
    ],
)
def test_refusals_with_line_and_column(source, kind, line, col, words):
    err = run_program(source, RunOptions(simulate_cuda=False)).error
    assert err is not None and err.kind == kind, err
    assert (err.line, err.col) == (line, col), err
    assert words in err.message, err
