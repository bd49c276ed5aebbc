"""util.plainsize.decoded_size: what a result costs once unpickled in the server, counted
against what pickle.loads really allocates."""

from __future__ import annotations

import pickle
import tracemalloc

import pytest

from gradviz.graph.model import TensorInfo
from gradviz.util.plainsize import MAX_DEPTH, NotPlain, decoded_size


def _unpickled(value) -> int:
    """Bytes pickle.loads holds for value's pickle, measured."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    tracemalloc.start()
    try:
        obj = pickle.loads(data)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del obj
    return held


def _info(i: int) -> TensorInfo:
    return TensorInfo(
        id=f"t{i}", name=f"a{i}", label=f"a{i}", line=i, expr="x.unbind()", shape=[4096, 0],
        dtype="float32", device="cpu", requires_grad=False, is_leaf=True, retains_grad=False,
        grad_fn=None, value=[1.5, 2.5], preview="[] (no values)", stats={"min": 0.5 + i},
    )  # fmt: skip


CASES = {
    "empty lists": [[[] for _ in range(500)] for _ in range(100)],
    "empty dicts": [{} for _ in range(20_000)],
    "strings": [f"name{i}" for i in range(20_000)],
    "floats": [[float(i) for i in range(1000)] for _ in range(20)],
    "big ints": list(range(1000, 30_000)),
    "records": [_info(i) for i in range(2_000)],
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_count_is_what_unpickling_takes(name):
    value = CASES[name]
    counted, held = decoded_size(value), _unpickled(value)
    assert 0.85 * held <= counted <= 1.5 * held, f"{name}: counted {counted:,}, took {held:,}"


def test_empty_containers_cost_what_they_take():
    """2 bytes pickled, about 56 once read back: an empty list is not free."""
    lists = [[] for _ in range(10_000)]
    assert decoded_size(lists) > 10_000 * 50
    assert len(pickle.dumps(lists, protocol=pickle.HIGHEST_PROTOCOL)) < 10_000 * 3


def test_what_pickle_sends_once_is_counted_once():
    shared = [1.5] * 1000
    assert decoded_size([shared] * 100) < 2 * decoded_size([shared])
    assert decoded_size([None, True, 3, "", "a", ()] * 1000) == decoded_size([0] * 6000)


def test_deep_nesting_is_refused_without_recursion():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(NotPlain, match="deeper"):
        decoded_size(deep)
    ok: list = []
    for _ in range(MAX_DEPTH - 1):
        ok = [ok]
    assert decoded_size(ok) > 0


def test_counting_stops_past_the_limit():
    big = [[[] for _ in range(10)] for _ in range(100_000)]
    whole = decoded_size(big)
    assert 1_000_000 < decoded_size(big, limit=1_000_000) < whole / 10


def test_only_plain_data_is_counted():
    with pytest.raises(NotPlain, match="function"):
        decoded_size({"f": lambda: 1})
    with pytest.raises(NotPlain):
        decoded_size([object()])


def test_the_count_does_not_depend_on_the_values_history():
    """The same result counts the same in every process: a stored result is compared with a
    fresh run (services.landing), stats and all."""
    label = "w·L3 …" * 3
    before = decoded_size([label])
    pickle.dumps(label)  # CPython now keeps its UTF-8 beside it
    assert decoded_size([label]) == before
    grown = {i: i for i in range(1000, 1100)}
    for i in range(1000, 1095):
        del grown[i]
    assert decoded_size(grown) == decoded_size({i: i for i in range(1095, 1100)})
