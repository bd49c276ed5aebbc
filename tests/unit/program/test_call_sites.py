"""gradviz.program.budgets.call_sites: a call site's kept verdict is found by its exact
signature, and every call found there is still charged and refused over a cap at its own
line, before its work, as the long way refuses it."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from gradviz.graph.values import list_cells
from gradviz.program.budgets import precheck as budget_module
from gradviz.program.budgets.call_sites import PER_SITE, Sites, broadcast_signature, signature
from gradviz.program.budgets.precheck_memo import Verdicts
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import DEFAULT_LIMITS, Limits
from gradviz.program.results.trace import RunOptions

HEADER = "import torch\n"


def run(source: str, **options):
    return run_program(source, RunOptions(classic=False, **options))


def run_long_way(monkeypatch, source: str, **options):
    """The run with nothing kept: every call measured or sized afresh."""
    with monkeypatch.context() as m:
        m.setattr(Verdicts, "get", lambda self, key: None)
        m.setattr(Sites, "get", lambda self, node, fn, sig: None)
        return run(source, **options)


def same_outcome(kept, plain) -> None:
    assert kept.error is not None and plain.error is not None
    assert kept.error.to_dict() == plain.error.to_dict()
    assert kept.stdout == plain.stdout
    assert (kept.stats.operations, kept.stats.flops, kept.stats.bytes) == (
        plain.stats.operations,
        plain.stats.flops,
        plain.stats.bytes,
    )


@pytest.fixture
def site_hits(monkeypatch):
    """The charges found at call sites."""
    hits = []
    real = Sites.get

    def spy(self, node, fn, sig):
        found = real(self, node, fn, sig)
        if found is not None:
            hits.append(node)
        return found

    monkeypatch.setattr(Sites, "get", spy)
    return hits


@pytest.fixture
def meta_calls(monkeypatch):
    calls = []
    real = budget_module.Budget._meta_call

    def spy(self, fn, meta_args, meta_kwargs):
        calls.append(fn)
        return real(self, fn, meta_args, meta_kwargs)

    monkeypatch.setattr(budget_module.Budget, "_meta_call", spy)
    return calls


# -- the caps, on calls found at their site


def loop(passes: int) -> str:
    return HEADER + (
        "a = torch.randn(64, 64)\n"
        "idx = torch.tensor([0, 1, 2])\n"
        f"for i in range({passes}):\n"
        "    b = a @ a\n"
        "    c = a[idx]\n"
        "    d = a + a\n"
        "    if i >= 990:\n"
        "        print(i)\n"
    )


def totals(monkeypatch, source: str) -> dict[str, float]:
    """What the run's budget counted in all."""
    budgets = []
    real = budget_module.Budget.__init__

    def spy(self, state):
        real(self, state)
        budgets.append(self)

    with monkeypatch.context() as m:
        m.setattr(budget_module.Budget, "__init__", spy)
        trace = run(source)
    assert trace.error is None, trace.error
    (budget,) = budgets
    return {
        "max_total_flops": budget.total_flops,
        "max_total_bytes": budget.total_bytes,
        "max_total_elements": budget.total_elements,
    }


@pytest.mark.parametrize("cap", ["max_total_flops", "max_total_bytes", "max_total_elements"])
def test_the_1000th_pass_is_refused_at_its_line_after_999_found(monkeypatch, site_hits, cap):
    before, after = totals(monkeypatch, loop(999))[cap], totals(monkeypatch, loop(1000))[cap]
    limit = (before + after) / 2
    limits = Limits(**{cap: int(limit) if cap != "max_total_flops" else limit})
    site_hits.clear()
    trace = run(loop(2000), limits=limits)
    assert trace.error is not None and trace.error.kind == "limit", trace.error
    assert "in all" in trace.error.message, trace.error.message
    assert trace.error.line in (5, 6, 7)
    assert [s.strip() for s in trace.stdout] == [str(i) for i in range(990, 999)]
    assert len(site_hits) >= 3 * 998  # the passes before were found at their sites
    same_outcome(trace, run_long_way(monkeypatch, loop(2000), limits=limits))


def test_a_found_call_is_charged_as_a_measured_one(monkeypatch, site_hits):
    kept = run(loop(50))
    plain = run_long_way(monkeypatch, loop(50))
    assert kept.error is None and plain.error is None
    assert site_hits
    assert (kept.stats.operations, kept.stats.flops, kept.stats.bytes) == (
        plain.stats.operations,
        plain.stats.flops,
        plain.stats.bytes,
    )


def test_a_larger_shape_at_a_site_is_measured_and_refused_before_work(meta_calls):
    source = HEADER + (
        "for n in [10, 10, 10, 3000, 10]:\n    a = torch.zeros(n, n)\n    b = a @ a\n    print(n)\n"
    )
    limits = Limits(max_tensor_elements=1_000_000)
    trace = run(source, limits=limits)
    assert trace.error is not None and trace.error.kind == "limit"
    assert trace.error.line == 3  # a = torch.zeros(n, n): refused before it allocates
    assert [s.strip() for s in trace.stdout] == ["10", "10", "10"]
    matmuls = [fn for fn in meta_calls if getattr(fn, "__name__", "") == "matmul"]
    assert len(matmuls) == 1  # the three small passes: measured once


def test_a_site_over_a_one_tensor_cap_is_refused_every_time():
    """A verdict over a cap of one tensor is kept with `fits` False: never charged short."""
    budget = budget_module.Budget(_state(max_tensor_elements=10))
    node = object()
    for _ in range(3):
        with pytest.raises(Exception, match="per tensor"):
            budget.before_call(
                "+", None, (torch.ones(4, 1), torch.ones(1, 4)), {}, node, "broadcast"
            )


# -- what misses a site


def test_a_changed_shape_dtype_requires_grad_or_number_misses_the_signature():
    a = torch.ones(2, 3)
    base = signature((a, 1), {})
    assert signature((torch.ones(2, 3), 1), {}) == base
    for other in (
        (torch.ones(3, 2), 1),
        (torch.ones(2, 3, dtype=torch.float64), 1),
        (torch.ones(2, 3, requires_grad=True), 1),
        (torch.ones(3, 2).t(), 1),  # the same shape, other strides
        (a, 2),
        (a, True),  # not 1
        (a, 1.0),
        (a, (1,)),
        (a, slice(1)),
    ):
        assert signature(other, {}) != base, other
    assert signature((a, -0.0), {}) != signature((a, 0.0), {})
    assert signature((a,), {"dim": 1}) != signature((a,), {"dim": 0})
    assert signature((a, object()), {}) is None
    assert signature((a, list(range(1000))), {}) is None
    assert broadcast_signature((a, 2.0), {}) == [a.shape, a.dtype]
    assert broadcast_signature((a, a.double()), {}) != broadcast_signature((a, a), {})


def test_another_function_at_a_site_misses_it():
    sites = Sites()
    node = object()
    sites.put(node, torch.add, [1], "charge")
    assert sites.get(node, torch.add, [1]) == "charge"
    assert sites.get(node, torch.sub, [1]) is None
    assert sites.get(node, torch.add, [2]) is None
    assert sites.get(node, torch.add, None) is None


def test_a_site_keeps_its_last_signatures_and_the_store_is_bounded():
    sites = Sites(size=3)
    node = object()
    for i in range(PER_SITE + 2):
        sites.put(node, None, [i], i)
    assert sites.get(node, None, [0]) is None and sites.get(node, None, [1]) is None
    assert [sites.get(node, None, [i]) for i in range(2, PER_SITE + 2)] == list(
        range(2, PER_SITE + 2)
    )
    others = [object() for _ in range(5)]
    for other in others:
        sites.put(other, None, [0], 0)
    assert len(sites.found) == 3


def test_a_loop_over_parameters_of_several_shapes_is_found_at_its_site(site_hits):
    source = HEADER + (
        "ps = [torch.randn(3, 4), torch.randn(4), torch.randn(4, 2), torch.randn(2)]\n"
        "for step in range(20):\n"
        "    for p in ps:\n"
        "        p += -0.1 * p\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    assert len(site_hits) >= 2 * 4 * 19


def test_a_value_dependent_size_is_never_kept_at_its_site(monkeypatch, site_hits):
    source = HEADER + (
        "for n in [2, 3, 4, 5]:\n    z = torch.zeros(torch.tensor(n))\n    print(z.shape[0])\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    assert [s.strip() for s in trace.stdout] == ["2", "3", "4", "5"]
    plain = run_long_way(monkeypatch, source)
    assert trace.stats.bytes == plain.stats.bytes


def _state(**limits):
    from gradviz.program.recording.state import RunState

    options = RunOptions(
        simulate_cuda=False, classic=False, limits=dataclasses.replace(DEFAULT_LIMITS, **limits)
    )
    return RunState("x = 1\n", options)


# -- a bounded call's values read and bytes made


@pytest.mark.parametrize(
    "shape", [(), (0,), (5,), (3, 4), (3, 0), (0, 4), (1, 1), (4, 1, 1), (2, 0, 3), (2, 3, 0)]
)
def test_values_read_are_the_values_or_the_rows_lists_where_more(shape):
    budget = budget_module.Budget(_state())
    t = torch.zeros(shape)
    budget.count_work((t, "grad", 3), None)
    expected = t.numel() if t.dim() < 2 else max(t.numel(), list_cells(t.shape))
    assert budget.total_elements == expected


def test_new_bytes_count_a_result_s_own_storage_only():
    budget = budget_module.Budget(_state())
    a = torch.zeros(10)
    budget.count_new_bytes(a.view(2, 5), (a,), None)  # a view: no new storage
    assert budget.total_bytes == 0
    budget.count_new_bytes(a + 1, (a,), None)
    assert budget.total_bytes == 40
    budget.count_new_bytes((a[:2], a * 2), (a,), None)  # a tuple: the new one only
    assert budget.total_bytes == 80
    for plain in (None, 3, 2.0, True, torch.Size([2]), torch.float32):
        budget.count_new_bytes(plain, (a,), None)
    assert budget.total_bytes == 80
