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
from tests.same_as_python import printed
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
