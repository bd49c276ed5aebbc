"""The tutorial set: well-known tutorial programs (tests/tutorials/, one file each, copied as
written apart from their data loading) print what CPython with PyTorch prints for the same
text, with the same seed, on the CPU, with one thread.

Each file is run by gradviz's run_program and by real Python executing the same file (trusted
test code: this test's own files, never a program of the product's users)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from gradviz.program.results.limits import DEFAULT_LIMITS
from tests.same_as_python import printed, refused
from tests.unit.test_tutorials import python_run

TUTORIALS = Path(__file__).resolve().parents[1] / "tutorials"
# the same caps as every run, with room on the clock: these tests compare what is printed, and
# run on a shared machine (the speed is measured by bench/tutorial_speed.py)
LIMITS = dataclasses.replace(DEFAULT_LIMITS, max_seconds=300.0)
PASSING = [
    "d2l_linear_regression",
    "d2l_mlp_scratch",
    "makemore_bigram_counts",
    "makemore_bigram_nn",
    "makemore_mlp",
]


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
    assert printed(source, limits=LIMITS) == expected


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
