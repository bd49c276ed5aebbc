"""The tutorial set: well-known tutorial programs (tests/tutorials/, one file each, copied as
written apart from their data loading) print what CPython with PyTorch prints for the same
text, with the same seed, on the CPU, with one thread.

Each file is run by gradviz's run_program and by real Python executing the same file (trusted
test code: this test's own files, never a program of the product's users)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch

from gradviz.program.results.limits import DEFAULT_LIMITS
from tests.same_as_python import printed, refused
from tests.unit.program.test_tutorials import python_run

TUTORIALS = Path(__file__).resolve().parents[2] / "tutorials"
# the same caps as every run, with room on the clock: these tests compare what is printed, and
# run on a shared machine (the speed is measured by bench/tutorial_speed.py)
LIMITS = dataclasses.replace(DEFAULT_LIMITS, max_seconds=300.0)
PASSING = [
    "d2l_linear_regression",
    "d2l_mlp_scratch",
    "d2l_softmax_regression",
    "makemore_bigram_counts",
    "makemore_bigram_nn",
    "makemore_mlp",
    "makemore_gru_cell",
    "gpt_bigram",
    "gpt_block",
    "pytorch_autograd",
    "pytorch_nn_tutorial",
    "pytorch_polynomial",
    "pytorch_nn_tutorial_fit",
]
# an object's address differs from run to run (`<AddBackward0 object at 0x7f...>`)
ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tutorial(name: str) -> str:
    return (TUTORIALS / f"{name}.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", PASSING)
def test_tutorial_prints_what_python_prints(name, one_thread):
    source = tutorial(name)
    expected, _ = python_run(source)
    assert expected, "the tutorial prints something"
    got = printed(source, limits=LIMITS)
    assert [ADDRESS.sub(" at 0x…>", line) for line in got] == [
        ADDRESS.sub(" at 0x…>", line) for line in expected
    ]


def test_every_tutorial_runs():
    names = {path.stem for path in TUTORIALS.glob("*.py")}
    assert names == set(PASSING)


def test_every_tutorial_file_names_its_source_and_its_changes():
    for path in sorted(TUTORIALS.glob("*.py")):
        header = path.read_text(encoding="utf-8").split("\nimport", 1)[0]
        assert header.startswith("# ") and "Changed" in header, path.name


# ---------------------------------------------------------------- what the tutorials needed

GENERATOR = """\
g = torch.Generator().manual_seed(2147483647)
a = torch.randn((3, 3), generator=g)
p = torch.rand(5, generator=g)
ix = torch.multinomial(p, num_samples=4, replacement=True, generator=g)
b = torch.randn(2)
g2 = torch.Generator()
g2.manual_seed(7)
print(a, ix, b, torch.randint(0, 10, (4,), generator=g2), g.initial_seed())
"""


def test_a_generator_of_the_programs_own_draws_what_pytorch_draws():
    """makemore's `torch.Generator().manual_seed(2147483647)`, passed as generator=: the same
    numbers as PyTorch's, and the run's own generator untouched by it (torch.Generator was
    not available)."""
    assert printed(GENERATOR) == python_run(GENERATOR)[0]


def test_a_generator_is_made_on_the_cpu_and_seeded_by_an_integer():
    refused("g = torch.Generator('cuda')", "type", 1, 5, "CPU generator")
    refused("g = torch.Generator().manual_seed('a')", "type", 1, 5, "one integer")
    refused("g = torch.Generator().manual_seed(2**70)", "runtime", 1, 5, "64-bit")
    refused("g = torch.Generator()\ns = g.get_state()", "type", 2, 5, "no method `.get_state`")
    refused("x = torch.randn(3, generator='g')", "type", 1, 5, "takes a torch.Generator()")


def test_a_tensor_indexed_by_a_range_as_pytorch_reads_it():
    """d2l's cross_entropy, `y_hat[range(len(y_hat)), y]` (a range was refused as an index)."""
    source = "y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])\n"
    source += "print(y_hat[range(len(y_hat)), torch.tensor([0, 2])], y_hat[range(1)])\n"
    assert printed(source) == python_run(source)[0]
    refused("x = torch.ones(3)[range(10**9)]", "limit", 1, 5, "items per list")


def test_type_with_a_dtype_nelement_and_splitlines():
    """d2l's `y_hat.type(y.dtype)`, makemore's `xs.nelement()` and its names read with
    `.splitlines()` (each refused as unknown)."""
    source = "x = torch.tensor([1.5, 2.0])\ny = x.type(torch.int64)\n"
    source += (
        "print(y, x.type(), x.nelement(), 'ab\\ncd\\n'.splitlines(), 'a\\r\\nb'.splitlines(True))\n"
    )
    assert printed(source) == python_run(source)[0]
    refused("x = torch.ones(3).type('torch.cuda.FloatTensor')", "type", 1, 5, "one dtype")


HEAD = """\
import torch
import torch.nn as nn
from torch.nn import functional as F

class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))
        self.register_buffer('scale', None, persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) * C**-0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
        return F.softmax(wei, dim=-1)

torch.manual_seed(0)
head = Head(4, 3, 5).to('cpu')
out = head(torch.randn(2, 5, 4))
print(out[0], list(head.state_dict().keys()), [b.shape for b in head.buffers()])
print(sum(p.numel() for p in head.parameters()), head.scale)
head.tril = torch.ones(5, 5)
print(head.tril.sum(), head.state_dict()['tril'].sum())
"""


def test_a_module_registers_a_buffer_as_pytorch_does():
    """The GPT lecture's Head: `self.register_buffer('tril', ...)` (refused before), read
    back as self.tril, in state_dict() and buffers(), replaced by assignment; a None buffer
    with persistent=False."""
    assert printed(HEAD) == python_run(HEAD)[0]


def test_a_buffer_is_a_tensor_with_a_public_name_set_after_init():
    head = "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
    ready = head + "        super().__init__()\n"
    refused(ready + "        self.register_buffer('__x', torch.ones(2))\nm = M()", "type", 5, 9)
    refused(ready + "        self.register_buffer('b', [1, 2])\nm = M()", "type", 5, 9, "a tensor")
    before = head + "        self.register_buffer('b', torch.ones(2))\n        super().__init__()\n"
    refused(before + "m = M()", "type", 4, 9, "before Module.__init__()")
    training = ready + "        self.register_buffer('training', torch.ones(2))\nm = M()"
    refused(training, "runtime", 5, 9, "KeyError: \"attribute 'training' already exists\"")


ISINSTANCE = """\
import torch.nn as nn
class N(nn.Module):
    def __init__(self):
        super().__init__()
n = N()
opt = torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=1.0)
print(isinstance(3, nn.Module), isinstance(nn.Linear(2, 2), torch.nn.Module), isinstance(n, nn.Module))
print(isinstance(opt, (torch.optim.Optimizer, int)), isinstance(n, torch.optim.Optimizer))
print(isinstance(torch.ones(1), nn.Module), isinstance(opt, nn.Module))
"""


def test_isinstance_of_a_module_or_an_optimizer():
    """d2l's `isinstance(net, torch.nn.Module)` and `isinstance(updater, torch.optim.Optimizer)`
    (the names were not available); the types are named, never called or kept."""
    assert printed(ISINSTANCE) == python_run(ISINSTANCE)[0]
    refused("m = torch.nn.Module()", "type", 1, 5, "cannot be called")
    refused("o = torch.optim.Optimizer([], {})", "type", 1, 5, "cannot be called")
    refused("x = [torch.nn.Module]", "type", 1, 6, "cannot hold")


SEQUENTIAL = """\
import torch.nn as nn
class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln = nn.LayerNorm(n)
        self.fc = nn.Linear(n, n)

    def forward(self, x):
        return x + self.fc(self.ln(x))

torch.manual_seed(0)
blocks = nn.Sequential(*[Block(4) for _ in range(2)], nn.ReLU())
y = blocks(torch.randn(3, 4))
y.sum().backward()
print(y, blocks[0].fc.weight.grad.sum(), len(list(blocks.parameters())))
"""


def test_a_sequential_of_the_programs_own_modules_runs_their_forward():
    """The GPT lecture's `nn.Sequential(*[Block(...) for _ in range(n_layer)])`: each block's
    forward runs (torch's Sequential found an empty nn.Module with no forward)."""
    assert printed(SEQUENTIAL) == python_run(SEQUENTIAL)[0]
    two = SEQUENTIAL.replace("y = blocks(torch.randn(3, 4))", "y = blocks(torch.randn(3, 4), 1)")
    refused(two, "type", 13, 5, "takes 1 input, 2 given")
