"""The short cuts of every call into torch (gradviz.program.runtime.torch_calls.Library.call):
an element-wise call's output kept by its tensors' shapes and dtypes, the nodes of a run on
the CPU alone noted only when another device appears, the names bound to a tensor found in
one look-up. Each gives the answer the long way gives, and a cap still refuses before work."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from gradviz.graph.record import Binding
from gradviz.program.budgets.object_sizes import OBJECT_MAKERS, PIECES
from gradviz.program.budgets.precheck import Budget
from gradviz.program.interpreter.run import run_program
from gradviz.program.recording.inplace import InplaceLog
from gradviz.program.recording.state import NAMED_LOOP_PASSES, RunState
from gradviz.program.results.limits import DEFAULT_LIMITS
from gradviz.program.results.trace import RunOptions
from gradviz.program.runtime.placement import Placement
from gradviz.program.runtime.torch_calls import (
    MAKES_OBJECTS,
    plain_arguments,
    unsized,
    unsized_in,
)
from gradviz.program.syntax.program_error import ProgramError

HEADER = "import torch\n"


def _state(**limits) -> RunState:
    options = RunOptions(
        simulate_cuda=False, classic=False, limits=dataclasses.replace(DEFAULT_LIMITS, **limits)
    )
    return RunState("x = 1\n", options)


# -- element-wise calls: the output kept by (shape, dtype) of each tensor


def test_a_kept_broadcast_is_charged_on_every_call():
    budget = Budget(_state())
    a, b = torch.ones(3, 1), torch.ones(1, 4)
    budget.precheck_broadcast("+", (a, b), {}, None)
    first = (budget.total_bytes, budget.total_elements)
    budget.precheck_broadcast("+", (a, b), {}, None)
    assert (budget.total_bytes, budget.total_elements) == (2 * first[0], 2 * first[1])
    assert first == (12 * 4, 12)


def test_the_same_call_with_a_larger_shape_is_refused_before_work():
    budget = Budget(_state(max_tensor_elements=100))
    small = torch.ones(5, 1)
    budget.precheck_broadcast("+", (small, small.T), {}, None)  # 25 values: kept
    big = torch.empty(20, 1)
    with pytest.raises(ProgramError, match="would allocate"):
        budget.precheck_broadcast("+", (big, big.T), {}, None)  # 400 values


def test_a_wider_dtype_at_the_same_shapes_is_charged_its_own_bytes():
    budget = Budget(_state())
    a = torch.ones(2, 3)
    budget.precheck_broadcast("*", (a, a), {}, None)
    assert budget.total_bytes == 6 * 4
    budget.precheck_broadcast("*", (a, a.double()), {}, None)
    assert budget.total_bytes == 6 * 4 + 6 * 8
    budget.precheck_broadcast("*", (a.double(), a), {}, None)
    assert budget.total_bytes == 6 * 4 + 2 * 6 * 8


def test_a_kept_broadcast_over_the_total_budget_is_refused():
    budget = Budget(_state(max_total_elements=50))
    a = torch.ones(4, 5)
    budget.precheck_broadcast("+", (a, a), {}, None)  # 20
    budget.precheck_broadcast("+", (a, a), {}, None)  # 40
    with pytest.raises(ProgramError, match="in all"):
        budget.precheck_broadcast("+", (a, a), {}, None)  # 60: the kept verdict is charged


def test_a_loop_growing_its_tensor_is_stopped_at_the_pass_that_passes_the_cap():
    source = HEADER + (
        "n = 1\n"
        "for i in range(12):\n"
        "    x = torch.zeros(n, 1) + torch.zeros(1, n)\n"
        "    print(i, x.shape[0])\n"
        "    n = n * 4\n"
    )
    limits = dataclasses.replace(DEFAULT_LIMITS, max_tensor_elements=10**6)
    trace = run_program(source, RunOptions(classic=False, limits=limits))
    assert trace.error is not None and "would allocate" in trace.error.message
    assert trace.error.line == 4  # the sum, before it is made
    assert trace.stdout[-1].split() == ["4", "256"]  # 1024 squared is over


# -- the nodes' devices: none noted while everything is on the CPU


def _note(placement: Placement, result):
    fake_out, *_ = placement.before_call("op", torch.mul, (), {}, None)
    placement.after_call(result, (), {}, fake_out)


def test_a_run_on_the_cpu_alone_notes_no_node():
    placement = Placement(_state())
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    _note(placement, y)
    _note(placement, (y.sum(), y + 1))
    assert dict(placement.fn_devices) == {}  # gradviz.graph.build reads "cpu" for each
    assert len(placement.fn_devices.waiting) == 3


def test_a_second_device_notes_the_cpu_nodes_first():
    placement = Placement(_state())
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    _note(placement, y)
    z = y.to("meta")  # its node's walk reaches y's node, on the CPU
    _note(placement, z)
    devices = {type(fn).__name__: where for fn, where in placement.fn_devices.values()}
    assert devices == {"MulBackward0": "cpu", "ToCopyBackward0": "meta"}
    assert placement.fn_devices.waiting == []
    w = y * 3  # from now on every node is noted as it is made
    _note(placement, w)
    assert placement.fn_devices[id(w.grad_fn)][1] == "cpu"


def test_clearing_the_notes_lets_go_of_the_waiting_nodes():
    placement = Placement(_state())
    _note(placement, torch.ones(2, requires_grad=True) * 2)
    placement.fn_devices.clear()
    assert placement.fn_devices.waiting == []


# -- the names bound to a tensor, as it is now


def _bind(state: RunState, name: str, tensor, line: int, step=()):
    state.add_binding(Binding(name, tensor, line, name, False, "", step=step))


def test_bound_now_follows_versions_and_replaced_loop_bindings():
    state = _state()
    t = torch.zeros(3)
    assert not state.bound_now(t)
    _bind(state, "t", t, 1)
    assert state.bound_now(t)
    t.add_(1)  # a new version: no name was bound to it
    assert not state.bound_now(t)
    kept = []
    for i in range(NAMED_LOOP_PASSES + 3):  # a loop's binding: only the latest kept
        u = torch.zeros(2)
        kept.append(u)
        _bind(state, "u", u, 5, step=(i,))
    assert all(state.bound_now(u) for u in kept[:NAMED_LOOP_PASSES])
    assert [state.bound_now(u) for u in kept[NAMED_LOOP_PASSES:]] == [False, False, True]
    expected = {(id(b.tensor), b.version) for b in state.bindings}
    assert all(state.bound_now(u) == ((id(u), u._version) in expected) for u in kept)


def test_the_same_tensor_bound_twice_stays_bound_when_one_binding_is_replaced():
    state = _state()
    t = torch.zeros(2)
    _bind(state, "a", t, 1)
    for i in range(NAMED_LOOP_PASSES + 2):
        _bind(state, "b", t if i <= NAMED_LOOP_PASSES else torch.ones(1), 2, step=(i,))
    assert state.bound_now(t)


def _scanned(self, tensor) -> bool:
    """bound_now the long way: every binding read."""
    version = tensor._version
    return any(b.tensor is tensor and b.version == version for b in reversed(self.bindings))


def test_in_place_changes_in_a_loop_show_what_the_long_way_shows(monkeypatch):
    source = HEADER + (
        "w = torch.ones(3, requires_grad=True)\n"
        "for i in range(14):\n"
        "    y = w * 2\n"
        "    y.add_(i)\n"
        "    z = y * y\n"
        "    z[0] = 5\n"
        "    z.sum().backward()\n"
        "print(w.grad)\n"
    )
    fast = run_program(source, RunOptions(classic=False))
    monkeypatch.setattr(RunState, "bound_now", _scanned)
    slow = run_program(source, RunOptions(classic=False))
    assert fast.error is None and fast.stdout == slow.stdout
    assert repr(fast.graph) == repr(slow.graph)
    assert repr(fast.tensors) == repr(slow.tensors)


# -- the rest of the call's checks


def test_the_in_place_labels_are_watched_on_tensors_only():
    t = torch.zeros(1)
    assert InplaceLog.watches(".add_()", (t, 1))
    assert InplaceLog.watches("+=", (t, 1)) and InplaceLog.watches("item assignment", (t,))
    assert not InplaceLog.watches(".add_()", (1, t))
    assert not InplaceLog.watches(".add_()", ())
    assert not InplaceLog.watches(".add()", (t, 1))


def test_every_function_that_makes_objects_is_counted_before_it_runs():
    assert set(PIECES) | {torch.Tensor.tolist} == set(OBJECT_MAKERS) == MAKES_OBJECTS


def test_a_lazy_parameter_is_found_wherever_it_is_given():
    lazy = torch.nn.LazyLinear(3).weight
    for args, kwargs in [((lazy,), {}), ((1, [lazy]), {}), ((), {"w": lazy}), ((), {"w": (lazy,)})]:
        assert unsized_in(args, kwargs)
    assert not unsized_in((torch.ones(1), 2, "x", None), {"dim": 1})
    assert unsized([lazy]) and not unsized(torch.ones(1))


# -- torch.tensor(data): measured once per nesting and types of numbers


def _measured(monkeypatch) -> list:
    calls: list = []
    real = Budget.measure

    def spy(self, fn, args, kwargs):
        calls.append(fn)
        return real(self, fn, args, kwargs)

    monkeypatch.setattr(Budget, "measure", spy)
    return calls


def test_a_tensor_of_each_batch_s_indices_is_measured_once(monkeypatch):
    calls = _measured(monkeypatch)
    source = HEADER + (
        "xs = []\n"
        "for i in range(20):\n"
        "    xs.append(torch.tensor([i, i + 1, i * 7]))\n"
        "print(xs[-1], xs[-1].dtype)\n"
    )
    trace = run_program(source, RunOptions(classic=False))
    assert trace.error is None and trace.stdout == ["tensor([ 19,  20, 133]) torch.int64"]
    assert len(calls) == 1


@pytest.mark.parametrize(
    "rows",
    [
        "[[1, 2], [3, 4], [5.5, 6], [True, False], [[1, 2]], [2**63 - 1, 2**63]]",
        "[[1, 2], [3, 4], [1, 2, 3], [0.5, 2], [-(2**63), 1], [-(2**63) - 1, 1]]",
    ],
)
def test_torch_tensor_kept_by_types_gives_what_measuring_each_call_gives(monkeypatch, rows):
    source = HEADER + (
        f"for row in {rows}:\n    t = torch.tensor(row)\n    print(t.dtype, tuple(t.shape))\n"
    )
    kept = run_program(source, RunOptions(classic=False))
    monkeypatch.setattr("gradviz.program.budgets.precheck_memo.Verdicts.get", lambda s, k: None)
    measured = run_program(source, RunOptions(classic=False))
    assert kept.stdout == measured.stdout and len(kept.stdout) == 5
    assert kept.error is not None and kept.error.to_dict() == measured.error.to_dict()
    assert (kept.stats.operations, kept.stats.bytes) == (
        measured.stats.operations,
        measured.stats.bytes,
    )


def test_a_larger_list_at_the_same_line_is_measured_and_refused_before_work():
    source = HEADER + ("for n in [3, 300]:\n    t = torch.tensor([[0.5] * n] * n)\n    print(n)\n")
    limits = dataclasses.replace(DEFAULT_LIMITS, max_tensor_elements=1000)
    trace = run_program(source, RunOptions(classic=False, limits=limits))
    assert trace.stdout == ["3"] and trace.error is not None
    assert "would allocate" in trace.error.message


# -- plain arguments: no array to unwrap and no object to refuse


def test_plain_arguments_are_exact_tensors_parameters_numbers_and_dtypes():
    t, p = torch.ones(2), torch.nn.Parameter(torch.ones(2))
    assert plain_arguments((t, p, 2, 0.5, True, None, "mean", torch.float32), {"dim": 0})
    lazy = torch.nn.LazyLinear(3).weight
    for other in ([t], (t,), lazy, torch.nn.Linear(2, 2), object()):
        assert not plain_arguments((t, other), {})
        assert not plain_arguments((t,), {"x": other})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("y = torch.add(torch.ones(2), other=net)", "takes tensors and numbers, not a"),
        ("y = torch.ones(2).add(net)", "takes tensors and numbers, not a"),
        ("y = torch.stack([torch.ones(2), net])", "takes tensors and numbers, not a"),
        ("y = torch.tanh(torch.from_numpy(np.ones(2)))", None),
        ("y = torch.cat([torch.ones(2), torch.from_numpy(np.ones(2)).float()])", None),
    ],
)
def test_calls_with_other_arguments_still_take_the_checks(line, message):
    source = "import torch\nimport torch.nn as nn\nimport numpy as np\nnet = nn.Linear(2, 2)\n"
    trace = run_program(source + line + "\nprint(y)\n", RunOptions(classic=False))
    if message is None:
        assert trace.error is None, trace.error
    else:
        assert trace.error is not None and message in trace.error.message


# -- a tensor's own attributes: read, not computed


@pytest.mark.parametrize("simulate_cuda", [False, True])
def test_reading_a_gradient_or_values_charges_no_bytes_and_counts_one_operation(simulate_cuda):
    """t.grad and t.data are what the tensor holds already: a loop reading them a thousand
    times allocates nothing (each read was charged the gradient's bytes before)."""
    base = "import torch\nx = torch.ones(10_000, requires_grad=True)\nx.sum().backward()\n"
    options = RunOptions(classic=False, simulate_cuda=simulate_cuda)
    before = run_program(base, options).stats
    reads = base + "for i in range(100):\n    g = x.grad\n    d = x.data\n    s = x.shape\n"
    after = run_program(reads, options)
    assert after.error is None
    assert after.stats.bytes == before.bytes
    assert after.stats.operations == before.operations + 300


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("print(x.grad, x.data.dtype, x.shape, x.ndim, x.is_leaf, x.requires_grad)", True),
        ("print(y.grad)", True),
        ("print(torch.ones(2, 2, 2).T)", True),  # a warning, as in Python
        ("print(torch.ones(2).mT)", False),
    ],
)
def test_attribute_reads_give_what_python_gives(line, shown):
    source = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\ny.sum().backward()\n"
    trace = run_program(source + line + "\n", RunOptions(classic=False))
    if shown:
        assert trace.error is None, trace.error
        assert trace.stdout
    else:  # torch's own error, explained at the line
        assert trace.error is not None and trace.error.line == 5


# -- torch.tensor of a dataset's rows: the rows passed to the meta device as they are


def test_plain_data_is_numbers_in_lists_and_tuples_only():
    from gradviz.program.budgets.precheck import plain_data

    row = [1, 2.5, True]
    assert plain_data([row, (3, 4, 5), [[6]], []]) and plain_data((1, 2)) and plain_data([])
    assert not plain_data(3) and not plain_data("abc") and not plain_data(torch.ones(2))
    for inside in (torch.tensor(1.0), "a", None, {1: 2}, torch.float32):
        assert not plain_data([row, [1, inside]])


def test_a_list_of_rows_is_sized_without_rebuilding_it(monkeypatch):
    """The same verdict as before (bytes, values), and no tree_map over the rows; a list
    holding a tensor still takes it."""
    from gradviz.program.budgets import precheck

    mapped = []
    tree_map = precheck.tree_map
    monkeypatch.setattr(
        precheck, "tree_map", lambda fn, value: mapped.append(value) or tree_map(fn, value)
    )
    rows = "X = []\nfor i in range(500):\n    X.append([i % 7, 1.5, 2])\n"
    trace = run_program(HEADER + rows + "T = torch.tensor(X)\nprint(T.shape, T.dtype)\n")
    assert trace.error is None and trace.stdout == ["torch.Size([500, 3]) torch.float32"]
    assert trace.stats.bytes >= 500 * 3 * 4

    def holds(value, length):
        inside = value if isinstance(value, tuple) else (value,)
        return any(isinstance(v, list) and len(v) == length for v in inside)

    assert not any(holds(v, 500) for v in mapped)
    mixed = run_program(HEADER + "t = torch.tensor([torch.tensor(1.5), 2.0])\nprint(t)\n")
    assert mixed.error is None and mixed.stdout == ["tensor([1.5000, 2.0000])"]
    assert any(holds(v, 2) for v in mapped)
