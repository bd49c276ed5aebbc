"""gradviz.program.objects.data: TensorDataset and DataLoader over a program's tensors batch and
shuffle as PyTorch does, in the program's own process, under the byte caps.

The language's `for` and next() come with the statements side of the language; they reach
a loader through Python's iterator protocol on these objects, which is what is driven here.
"""

from __future__ import annotations

import pytest
import torch
import torch.utils.data as torchdata

from gradviz.program.interpreter.statements import RESERVED_NAMES, Interpreter
from gradviz.program.results.limits import Limits
from gradviz.program.results.trace import RunOptions
from gradviz.program.syntax.checker import parse
from gradviz.program.syntax.program_error import ProgramError
from tests.unit.program.test_nn import ok, reference, refused

DATA = (
    "torch.manual_seed(3)\n"
    "x = torch.randn(10, 2)\n"
    "y = torch.arange(10)\n"
    "ds = torch.utils.data.TensorDataset(x, y)\n"
)


def interpreter(source: str, **options) -> Interpreter:
    options = RunOptions(classic=False, **options)
    interp = Interpreter(source, parse(source, options.limits, RESERVED_NAMES), options)
    interp.run()
    return interp


def test_dataset_len_index_and_tensors():
    trace = ok(DATA + "print(len(ds), ds[3][1], len(ds.tensors))\nrow = ds[3]\na, b = ds[1:3]\n")
    assert trace.stdout == ["10 tensor(3) 2"]
    assert trace.tensor("b").value == [1, 2]


@pytest.mark.parametrize("shuffle", [False, True])
def test_loader_batches_match_torch_pass_after_pass(shuffle):
    source = DATA + f"loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle={shuffle})\n"
    interp = interpreter(source)
    loader = interp.state.env["loader"]
    env = reference(source)
    with torch.random.fork_rng():
        torch.manual_seed(3)
        torch.randn(10, 2)  # what the reference drew before making its loader
        expected = [[b[1].tolist() for b in env["loader"]] for _ in range(2)]
    got = [[b[1].tolist() for b in loader] for _ in range(2)]
    assert got == expected
    assert got[0] != got[1] if shuffle else got[0] == got[1]
    x_batch, y_batch = next(iter(loader))
    assert torch.equal(x_batch, interp.state.env["x"][y_batch])
    assert len(loader.loader) == 3 and loader.length(None) == 3


def test_drop_last_and_batch_size_attribute():
    interp = interpreter(
        DATA + "loader = torch.utils.data.DataLoader(ds, batch_size=4, drop_last=True)\n"
        "print(len(loader), loader.batch_size)\n"
    )
    assert interp.state.stdout == ["2 4"]
    assert [len(b[1]) for b in interp.state.env["loader"]] == [4, 4]


def test_each_batch_is_counted_against_the_caps_before_it_is_stacked():
    source = DATA + "loader = torch.utils.data.DataLoader(ds, batch_size=8)\n"
    made = interpreter(source).budget.total_bytes
    interp = interpreter(source, limits=Limits(max_total_bytes=made + 100))
    with pytest.raises(ProgramError) as info:  # a batch: 8 x 2 floats and 8 integers, 128 bytes
        next(iter(interp.state.env["loader"]))
    assert info.value.kind == "limit" and "in all" in info.value.message


def test_a_shuffled_pass_is_bounded_and_a_big_batch_is_the_dataset():
    source = (
        "x = torch.zeros(1_000_001, dtype=torch.bool)\n"
        "ds = torch.utils.data.TensorDataset(x)\n"
        "small = torch.utils.data.TensorDataset(x[:50_000])\n"
        "a = torch.utils.data.DataLoader(small, batch_size=10**9)\n"
        "b = torch.utils.data.DataLoader(ds, shuffle=True)\n"
        "c = torch.utils.data.DataLoader(ds, batch_size=10**9)\n"
    )
    interp = interpreter(source)
    (whole,) = next(iter(interp.state.env["a"]))  # sized as the dataset, not 10**9 rows
    assert whole.shape == (50_000,)
    with pytest.raises(ProgramError) as info:
        iter(interp.state.env["b"])
    assert info.value.kind == "limit" and "1,000,000 rows" in info.value.message
    # PyTorch reads a batch row by row: a million rows are a million tuples, refused first
    with pytest.raises(ProgramError) as info:
        next(iter(interp.state.env["c"]))
    assert info.value.kind == "limit" and "batch of 1,000,001 items" in info.value.message


def test_batches_live_where_the_data_lives():
    interp = interpreter(
        "x = torch.randn(6, 2).to('cuda')\n"
        "ds = torch.utils.data.TensorDataset(x)\n"
        "loader = torch.utils.data.DataLoader(ds, batch_size=3)\n",
        simulate_cuda=True,
    )
    (batch,) = next(iter(interp.state.env["loader"]))
    assert str(interp.state.device_of(batch)) == "cuda:0"


def test_the_real_dataloader_is_single_process():
    interp = interpreter(DATA + "loader = torch.utils.data.DataLoader(ds)\n")
    made = interp.state.env["loader"].loader
    assert isinstance(made, torchdata.DataLoader) and made.num_workers == 0


@pytest.mark.parametrize(
    ("line", "kind", "words"),
    [
        ("l = torch.utils.data.DataLoader(ds, num_workers=-2)", "runtime", "non-negative"),
        ("l = torch.utils.data.DataLoader(ds, num_workers=2.0)", "type", "integer"),
        ("l = torch.utils.data.DataLoader(ds, collate_fn=print)", "forbidden", "collate_fn"),
        ("l = torch.utils.data.DataLoader(ds, sampler=print)", "forbidden", "sampler"),
        ("l = torch.utils.data.DataLoader(ds, batch_sampler=print)", "forbidden", "batch"),
        ("l = torch.utils.data.DataLoader(ds, worker_init_fn=print)", "forbidden", "workers"),
        ("l = torch.utils.data.DataLoader(ds, pin_memory=True)", "forbidden", "pinned"),
        ("l = torch.utils.data.DataLoader(ds, generator=3)", "forbidden", "manual_seed"),
        ("l = torch.utils.data.DataLoader(ds, batch_size=0)", "type", "positive"),
        ("l = torch.utils.data.DataLoader(x)", "type", "TensorDataset"),
        ("d = torch.utils.data.TensorDataset(x, torch.ones(3))", "runtime", "first dimension"),
        ("d = torch.utils.data.TensorDataset(print)", "type", "tensors"),
        ("d = torch.utils.data.random_split(ds, [5, 5])", "name", "not available"),
        ("n = len(iter)", "type", "does not take a built-in function"),
    ],
)
def test_data_refusals(line, kind, words):
    err = refused(DATA + line, kind, words)
    assert err.line == 5


def test_a_loop_over_a_loader_is_planned_from_its_batches():
    source = (
        "ds = torch.utils.data.TensorDataset(torch.zeros(10**7, 0))\n"
        "l = torch.utils.data.DataLoader(ds, batch_size=1)\n"
        "for i, b in enumerate(l):\n    pass\n"
    )
    err = refused(source, "limit", "would run 10,000,000 loop passes")
    assert (err.line, err.col) == (3, 13), err


def test_workers_are_read_in_one_process_with_a_warning():
    source = DATA + "loader = torch.utils.data.DataLoader(ds, batch_size=2, num_workers=4)\n"
    interp = interpreter(source)
    loader = interp.state.env["loader"]
    assert loader.loader.num_workers == 0 and loader.workers == 4
    (warning,) = interp.state.warnings
    assert "num_workers=4 runs in one process here" in warning.message
    assert warning.line == source.count("\n")
