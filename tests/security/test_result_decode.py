"""A small result must not unpickle big in the server.

`x = torch.zeros(600, 4096, 0)` unbound into 600 names came back as a 5 MB pickle of
2.5 million empty lists, which took the server 160 MB (and 1.5 s of CPU) to unpickle, on
every rerun of every session showing it. The worker now counts what a result takes once
unpickled (util.plainsize) and the server refuses, unread, what is over the limit.
"""

from __future__ import annotations

import pickle
import struct
import tracemalloc
from collections import OrderedDict

import pytest

from gradviz.program.results.trace import RunOptions
from gradviz.services.programs import run_isolated
from gradviz.workers import pool as pool_module
from gradviz.workers.pool import Pool, SandboxLimits
from gradviz.workers.protocol import ErrorKind, Message, Tag, WorkerError, encode, failed, unpack

NAMES = ", ".join(f"a{i}" for i in range(600))
EMPTY_UNBIND = f"x = torch.zeros(600, 4096, 0)\n{NAMES} = x.unbind()\n"
MANY = ", ".join(f"b{i}" for i in range(2500))
MANY_TENSORS = f"x = torch.rand(2500, 1)\n{MANY} = x.unbind()\n"  # about 3.4 MB unpickled
READ_BACK = 2_000_000  # this pool's limit on a result once unpickled


@pytest.fixture(scope="module")
def public_pool():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADVIZ_PUBLIC", "1")  # the workers are started public
        with Pool(SandboxLimits(workers=1, decoded_bytes=READ_BACK)) as p:
            yield p


@pytest.fixture(autouse=True)
def _public(monkeypatch):
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")


def _traced(call):
    """call()'s value and the most memory this process held for it meanwhile."""
    tracemalloc.start()
    try:
        value = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak


def test_a_small_result_does_not_unpickle_big(public_pool):
    trace, peak = _traced(lambda: run_isolated(EMPTY_UNBIND, RunOptions(), pool=public_pool))
    assert peak < 5_000_000, f"the server took {peak / 1e6:.0f} MB to read the result back"
    assert trace.error is None, trace.error
    assert len(trace.tensors) == 601
    assert all(t.value is None for t in trace.tensors[1:])  # no 4,096 empty lists each
    assert trace.tensors[1].preview == "[] (no values, shape (4096, 0))"
    assert trace.stats.decoded_bytes < 5_000_000


def test_a_result_over_the_read_back_limit_is_refused_unread(public_pool):
    trace, peak = _traced(lambda: run_isolated(MANY_TENSORS, RunOptions(), pool=public_pool))
    assert trace.error is not None and trace.error.kind == "limit", trace.error
    assert "too big to show" in trace.error.message and "read back" in trace.error.message
    assert trace.stats.worker == "result"  # a refusal of the runner: never cached
    assert peak < READ_BACK / 2, f"the server took {peak / 1e6:.1f} MB for a refused result"
    again = run_isolated("a = torch.ones(2)\n", RunOptions(), pool=public_pool)
    assert again.error is None  # the runner goes on serving


def _message(count: int, payload: bytes) -> bytes:
    return struct.pack("<Q", count) + payload


def _done(value) -> bytes:
    """A result's message pickled as a worker sends it (without its count)."""
    return pickle.dumps(encode(Message(Tag.DONE, value)))


CONFIG = {"decoded_bytes": READ_BACK, "result_bytes": 16_000_000}


def test_a_count_over_the_limit_is_not_unpickled():
    big = _message(READ_BACK + 1, _done([1.0]))
    with pytest.raises(pickle.UnpicklingError, match="declares"):
        unpack(big, READ_BACK)


def test_a_reply_may_hold_no_function_or_foreign_class():
    hostile = _message(10, _done(print))
    with pytest.raises(pickle.UnpicklingError, match="may not hold"):
        unpack(hostile, READ_BACK)
    for value in (unpack, OrderedDict(a=1)):
        foreign = _message(10, _done(value))
        with pytest.raises(pickle.UnpicklingError, match="may not hold"):
            unpack(foreign, READ_BACK)
    runs = _message(10, b"cos\nsystem\n(S'echo unpickled'\ntR.")
    with pytest.raises(pickle.UnpicklingError, match="may not hold os.system"):
        unpack(runs, READ_BACK)
    plain = _message(10, _done(RunOptions()))
    assert unpack(plain, READ_BACK).value == RunOptions()


def test_the_worker_counts_its_reply_and_refuses_one_over_the_limit():
    lists = [[] for _ in range(100_000)]  # 200 KB pickled, 6 MB unpickled
    message = pool_module._reply_frame(Message(Tag.DONE, lists), CONFIG)
    reply = unpack(message, READ_BACK)
    assert reply.error.kind == ErrorKind.RESULT and "read back" in reply.error.message
    small = pool_module._reply_frame(Message(Tag.DONE, [[]] * 10), CONFIG)
    reply = unpack(small, READ_BACK)
    assert reply.tag == Tag.DONE and reply.value == [[]] * 10


class _Gone:
    """A worker process as _reply sees it: alive until asked to die (nothing is killed)."""

    def __init__(self):
        self.alive = True

    def is_alive(self):
        return self.alive

    def join(self, timeout=None):
        self.alive = False


def _worker_reading(message: bytes, config: dict):
    """A pool Worker whose pipe holds `message`, as a worker that skipped its own checks
    (a compromised one) would send it; no process behind it."""
    import multiprocessing

    ours, theirs = multiprocessing.Pipe()
    theirs.send_bytes(message)
    w = pool_module.Worker.__new__(pool_module.Worker)
    w.conn, w.config, w.proc, w.pid, w.retire = ours, config, _Gone(), -1, False
    w.kill = lambda: setattr(w, "retire", True)  # noqa: B023 - nothing to kill here
    return w, theirs


def test_the_server_does_not_read_a_reply_over_its_size_limit():
    config = {"decoded_bytes": READ_BACK, "result_bytes": 100_000}
    w, _ = _worker_reading(_message(10, b"\x80\x05" + b"x" * 200_000), config)
    outcome = w._reply()
    assert outcome.status == "result" and "over" in outcome.message and w.retire


def test_the_server_does_not_unpickle_a_reply_whose_count_is_over_the_limit():
    lists = _done([[] for _ in range(100_000)])  # 6 MB unpickled
    w, _ = _worker_reading(_message(READ_BACK + 1, lists), CONFIG)
    outcome, peak = _traced(w._reply)
    assert outcome.status == "result" and "declares" in outcome.message and w.retire
    assert peak < 1_000_000  # the message read (0.2 MB), not its 6 MB of lists


def test_what_the_server_keeps_rests_on_its_own_count():
    """A worker that declares 10 bytes for 6 MB of lists: refused once counted here."""
    lists = _done([[] for _ in range(100_000)])
    w, _ = _worker_reading(_message(10, lists), CONFIG)
    outcome = w._reply()
    assert outcome.status == "result" and "read back" in outcome.message and w.retire
    honest = _done([[] for _ in range(100)])
    w, _ = _worker_reading(_message(10, honest), CONFIG)
    outcome = w._reply()
    assert outcome.status == "ok" and 100 * 56 < outcome.decoded < 100 * 100


def test_a_worker_s_error_reaches_the_server_as_data_with_its_kind():
    error = WorkerError.of(ValueError("bad size"), limit=500)
    w, _ = _worker_reading(pool_module._reply_frame(failed(error), CONFIG), CONFIG)
    outcome = w._reply()
    assert outcome.status == "error" and outcome.message == "ValueError: bad size"
    assert outcome.error == error and outcome.error.kind == ErrorKind.VALUE and not w.retire
    peak = WorkerError(ErrorKind.MEMORY, "the job reached 1 GB")
    reply = Message(Tag.ERROR, 1_000_000_000, peak, retire=True)
    w, _ = _worker_reading(pool_module._reply_frame(reply, CONFIG), CONFIG)
    outcome = w._reply()
    assert (outcome.status, outcome.value, w.retire) == ("memory", 1_000_000_000, True)


def test_a_reply_outside_the_protocol_is_refused():
    old = pickle.dumps(("ok", [1.0], False))  # the shape before the protocol: no tag it knows
    w, _ = _worker_reading(_message(10, old), CONFIG)
    outcome = w._reply()
    assert outcome.status == "result" and "read back" in outcome.message and w.retire
