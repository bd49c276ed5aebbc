"""Which tensors of a result keep their values: one rule (graph.model.ValueBudget), spent by the
worker while it builds the graph and applied again by program.results.cap_result. The two
used to differ: cap_result kept the first 200 tensors by position, the build the first 200
that carry values, so a tensor the build kept could lose its values in the cap."""

from __future__ import annotations

import pytest

from gradviz.graph.model import (
    MAX_RESULT_VALUES,
    MAX_TENSORS_WITH_VALUES,
    TensorInfo,
    ValueBudget,
)
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import Trace, cap_result


def _with_values(trace: Trace) -> list[str]:
    return [t.label for t in trace.tensors if t.value is not None or t.grad is not None]


def _info(i: int, value) -> TensorInfo:
    return TensorInfo(
        id=f"t{i}", name=f"a{i}", label=f"a{i}", line=1, expr="x", shape=[], dtype="float32",
        device="cpu", requires_grad=False, is_leaf=True, retains_grad=False, grad_fn=None,
        value=value, preview="[…]",
    )  # fmt: skip


def test_the_cap_keeps_exactly_the_values_the_build_kept():
    """Tensors too big to carry values come first, so the 200 that carry them run past
    position 200: the build keeps a0..a199, and so must the cap."""
    big = ", ".join(f"b{i}" for i in range(10))
    small = ", ".join(f"a{i}" for i in range(250))
    source = (
        f"big = torch.rand(10, 5000)\n{big} = big.unbind()\n{small} = torch.rand(250, 2).unbind()\n"
    )
    trace = run_program(source)
    assert trace.error is None, trace.error
    built = _with_values(trace)
    assert built == [f"a{i}" for i in range(MAX_TENSORS_WITH_VALUES)]
    assert trace.tensors.index(trace.tensor("a199")) > MAX_TENSORS_WITH_VALUES
    capped = cap_result(trace)
    assert _with_values(capped) == built
    assert (
        f"values are shown for {MAX_TENSORS_WITH_VALUES} of them; the other 50"
        in (capped.summary[0])
    )


def test_tensors_without_values_spend_nothing_of_the_cap():
    previews = [_info(i, None) for i in range(50)]
    values = [_info(50 + i, [1.0, 2.0]) for i in range(300)]
    capped = cap_result(Trace(source="", tensors=previews + values))
    assert _with_values(capped) == [f"a{50 + i}" for i in range(MAX_TENSORS_WITH_VALUES)]
    assert "values are shown for 200 of them; the other 100 show" in capped.summary[0]


@pytest.mark.parametrize(
    "counts",
    [
        [0, 5, 0, 70_000, 40_000, 20_000, 10_000, 0],
        [1] * 250,
        [0] * 10 + [500] * 190 + [MAX_RESULT_VALUES] + [1] * 20,
    ],
)
def test_a_second_pass_of_the_budget_keeps_what_the_first_kept(counts):
    first = ValueBudget()
    kept = [c if first.take(c) else 0 for c in counts]
    again = ValueBudget()
    assert [again.take(c) for c in kept] == [True] * len(kept)
    assert (again.kept, again.left_out) == (first.kept, 0)
    assert first.kept + first.left_out == sum(1 for c in counts if c)
    assert first.kept <= MAX_TENSORS_WITH_VALUES
    assert sum(kept) <= MAX_RESULT_VALUES
