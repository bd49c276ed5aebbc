"""What one result may carry back to the server is bounded in the worker.

`a0, ..., a2499 = torch.rand(2500, 4096).unbind()` passed every cap and came back as a
93 MB Trace (every small tensor's values as Python lists), held by the server's cache.
"""

from __future__ import annotations

import pickle

from gradviz.graph.model import MAX_RESULT_VALUES, MAX_TENSORS_WITH_VALUES, TensorInfo
from gradviz.program.results.trace import MAX_RESULT_BYTES, Trace, cap_result
from gradviz.services.programs import run_isolated
from gradviz.util.settings import PUBLIC

NAMES = ", ".join(f"a{i}" for i in range(2500))
UNBIND = f"x = torch.rand(2500, 4096)\n{NAMES} = x.unbind()\n"


def _values(trace: Trace) -> int:
    return sum(len(pickle.dumps((t.value, t.grad))) for t in trace.tensors if t.value or t.grad)


def test_many_small_tensors_come_back_summarised(pool):
    trace = run_isolated(UNBIND, pool=pool)
    assert trace.error is None, trace.error
    size = len(pickle.dumps(trace))
    assert size <= MAX_RESULT_BYTES, f"{size / 1e6:.1f} MB came back"
    assert trace.stats.result_bytes <= MAX_RESULT_BYTES
    assert len(trace.tensors) == 2501  # every tensor is still listed, with shape and preview
    assert trace.tensors[1].value is not None and trace.tensors[-1].value is None
    assert trace.tensors[-1].preview.startswith("[")
    assert sum(t.value is not None for t in trace.tensors) <= MAX_TENSORS_WITH_VALUES
    assert trace.summary and "2,501 tensors" in trace.summary[0]


def _info(i: int, value, expr: str = "x") -> TensorInfo:
    return TensorInfo(
        id=f"t{i}", name=f"a{i}", label=f"a{i}", line=1, expr=expr, shape=[len(value)],
        dtype="float32", device="cpu", requires_grad=False, is_leaf=True, retains_grad=False,
        grad_fn=None, value=value, preview="[…]",
    )  # fmt: skip


def test_values_in_all_are_capped():
    trace = Trace(source="", tensors=[_info(i, [1.5] * 4000) for i in range(100)])
    capped = cap_result(trace)
    sent = sum(len(t.value) for t in capped.tensors if t.value is not None)
    assert sent <= MAX_RESULT_VALUES
    assert "values are shown for 25 of them" in capped.summary[0]


def test_byte_ceiling_leaves_out_detail_then_refuses():
    big_dot = Trace(source="", tensors=[_info(0, [1.0])], classic_dot="x" * (MAX_RESULT_BYTES + 1))
    capped = cap_result(big_dot)
    assert capped.error is None and capped.classic_dot is None
    assert capped.stats.result_bytes <= MAX_RESULT_BYTES
    assert "left out" in capped.summary[-1]

    huge = Trace(source="", tensors=[_info(i, [1.0], expr=f"{i:0200d}") for i in range(50_000)])
    refused = cap_result(huge)
    assert refused.error.kind == "limit" and "MB" in refused.error.message
    assert "(a graph of 0 nodes, 50,000 tensors)" in refused.error.message
    assert len(pickle.dumps(refused)) <= MAX_RESULT_BYTES


def test_values_left_out_are_never_built_in_the_worker():
    """The values past the budget are not turned into Python lists at all: building the
    result used to take about 330 MB of Python floats in the worker (10 million of them),
    which with the forkserver and server put the app over its 690 MB budget."""
    import tracemalloc

    from gradviz.program.interpreter.run import run_program

    tracemalloc.start()
    try:
        trace = cap_result(run_program(UNBIND))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert trace.error is None, trace.error
    assert peak < 60e6, f"{peak / 1e6:.0f} MB of Python objects while building the result"
    assert trace.summary and "2,501 tensors" in trace.summary[0]
    assert sum(t.value is not None for t in trace.tensors) <= MAX_TENSORS_WITH_VALUES


def test_what_a_result_takes_once_read_back_is_capped(monkeypatch):
    """Values that hold no number (lists of empty lists) spend none of the value budget,
    but unpickling them is not free: 600 x 4,096 empty lists are 5 MB pickled and 160 MB
    read back in the server. Counted as they are read back, they are left out."""
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    tensors = [_info(i, [[] for _ in range(4096)]) for i in range(600)]
    capped = cap_result(Trace(source="", tensors=tensors))
    assert capped.error is None
    assert all(t.value is None for t in capped.tensors)
    assert "read back" in capped.summary[-1]
    assert capped.stats.decoded_bytes <= PUBLIC.decoded_bytes
    assert capped.stats.decoded_bytes < 2 * len(pickle.dumps(capped)) * 10


def test_deep_nesting_in_a_result_is_left_out():
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    capped = cap_result(Trace(source="", tensors=[_info(0, deep)]))
    assert capped.tensors[0].value is None and "nested too deep" in capped.summary[-1]
    refused = cap_result(Trace(source="", stdout=[deep]))  # nothing to leave out: refused
    assert refused.error.kind == "limit" and "nested too deep" in refused.error.message
