"""The one message shape of every worker loop (gradviz.workers.protocol): messages and errors
cross as plain data and come back the same, a tag or kind outside the protocol is refused,
and a framed reply's count is what it takes once read back."""

from __future__ import annotations

import ast
import multiprocessing
import pickle
import re
from collections import OrderedDict
from pathlib import Path

import pytest
import torch

from gradviz.program.syntax.program_error import ProgramError
from gradviz.speed.memory import SizeTooLarge
from gradviz.training.checkpoint import CheckpointError
from gradviz.training.hardware import DeviceError
from gradviz.training.sources import DataError
from gradviz.util.plainsize import decoded_size
from gradviz.workers.protocol import (
    COUNT,
    ErrorKind,
    Message,
    ProtocolError,
    Tag,
    WorkerError,
    decode,
    encode,
    failed,
    kind_of,
    pack,
    receive,
    send,
    unpack,
)

SRC = Path(__file__).resolve().parents[3] / "src" / "gradviz"

MESSAGES = [
    Message(Tag.REQUEST, ("run", ("x = 1\n", {"seed": 0}), 22.0)),
    Message(Tag.STOP),
    Message(Tag.READY, 123_456_789),
    Message(Tag.BROKEN, error=WorkerError(ErrorKind.FAILED, "the size checks failed")),
    Message(Tag.EVENT, {"loss": 2.3, "step": [1, 2]}),
    Message(Tag.DONE, [1.0, None, "text", (True, b"bytes")], retire=True),
    failed(WorkerError(ErrorKind.DATA, "no such folder", "DataError")),
    failed(WorkerError(ErrorKind.FAILED, "bad", "ProgramError", line=3, column=7), retire=True),
    Message(Tag.ERROR, 950_000_000, WorkerError(ErrorKind.MEMORY, "the job reached 950 MB")),
]


def _plain(value) -> bool:
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return type(value) in (type(None), bool, int, float, str, bytes)
    if type(value) in (tuple, list):
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.tag.value)
def test_a_message_crosses_as_plain_data_and_comes_back_the_same(message):
    data = encode(message)
    assert _plain(data), data  # no enum, no class of ours: strings, numbers, tuples, dicts
    assert decode(data) == message
    assert decode(pickle.loads(pickle.dumps(data))) == message


def test_every_loop_sends_and_receives_through_one_pipe_the_same():
    ours, theirs = multiprocessing.Pipe()
    for message in MESSAGES:
        send(theirs, message)
        assert receive(ours) == message


def test_unknown_tags_kinds_and_shapes_are_refused():
    good = encode(failed(WorkerError(ErrorKind.VALUE, "bad size", "ValueError")))
    with pytest.raises(ProtocolError, match="unknown error kind 'segfault'"):
        decode((good[0], None, {**good[2], "kind": "segfault"}, False))
    with pytest.raises(ProtocolError, match="unknown message tag 'ok'"):
        decode(("ok", 1, None, False))  # the pool's old reply shape
    bad = [
        ("event", 1),  # too short
        ["event", 1, None, False],  # a list is not a message
        ("done", 1, None, "no"),  # retire is a bool
        ("error", None, None, False),  # an error message without its error
        ("done", 1, good[2], False),  # a result with an error
        ("error", None, "ValueError: bad size", False),  # the old flat error text
        ("error", None, {**good[2], "extra": 1}, False),
        ("error", None, {**good[2], "line": "3"}, False),
        ("error", None, {**good[2], "message": 5}, False),
    ]
    for data in bad:
        with pytest.raises(ProtocolError):
            decode(data)
    assert issubclass(ProtocolError, ValueError)  # what the pool treats as unreadable


def test_kinds_are_checked_where_a_message_is_made():
    with pytest.raises(ProtocolError):
        WorkerError("data", "a kind as text is not a kind")
    with pytest.raises(ProtocolError):
        Message("done", 1)
    with pytest.raises(ProtocolError):
        Message(Tag.DONE, 1, WorkerError(ErrorKind.DATA, "x"))


def test_an_error_says_its_kind_by_its_class_not_its_name():
    assert kind_of(DataError("x")) == ErrorKind.DATA
    assert kind_of(DeviceError("x")) == ErrorKind.DEVICE
    assert kind_of(CheckpointError("x")) == ErrorKind.CHECKPOINT
    assert kind_of(SizeTooLarge("x")) == ErrorKind.SIZE
    assert kind_of(ValueError("x")) == ErrorKind.VALUE
    assert kind_of(MemoryError()) == ErrorKind.HOST_MEMORY
    assert kind_of(torch.OutOfMemoryError("CUDA out of memory")) == ErrorKind.DEVICE_MEMORY
    assert kind_of(RuntimeError("x")) == ErrorKind.FAILED

    lookalike = type("ValueError", (Exception,), {})  # named like a built-in, not one
    assert kind_of(lookalike("x")) == ErrorKind.FAILED
    assert kind_of(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")) == ErrorKind.FAILED


def test_an_error_keeps_its_message_name_line_and_column():
    error = WorkerError.of(DataError("no such folder"))
    assert (error.kind, error.message, error.name) == (
        ErrorKind.DATA,
        "no such folder",
        "DataError",
    )
    assert error.line is None and error.column is None
    assert error.text() == "DataError: no such folder"
    assert WorkerError(ErrorKind.RESULT, "too big").text() == "too big"
    located = WorkerError.of(ProgramError("runtime", "boom", line=4, col=2))
    assert (located.line, located.column, located.name) == (4, 2, "ProgramError")
    try:
        ast.parse("x = (")
    except SyntaxError as exc:
        syntax = WorkerError.of(exc)
    assert syntax.line == 1 and syntax.column == 5
    assert len(WorkerError.of(RuntimeError("x" * 5000), limit=500).message) == 500


def test_a_frame_counts_what_it_takes_once_read_back():
    lists = Message(Tag.DONE, [[] for _ in range(1000)])
    frame, count = pack(lists, limit=10_000_000)
    (declared,) = COUNT.unpack_from(frame)
    assert declared == count == decoded_size(encode(lists))
    assert 1000 * 56 < count < 1000 * 100  # an empty list: 2 bytes pickled, 56 read back
    assert len(frame) < count / 10
    assert unpack(frame, limit=count) == lists
    with pytest.raises(pickle.UnpicklingError, match="declares"):
        unpack(frame, limit=count - 1)  # over the reader's limit: not unpickled


def test_a_frame_holds_no_function_or_foreign_class():
    for value in (print, OrderedDict(a=1)):
        frame = COUNT.pack(10) + pickle.dumps(encode(Message(Tag.DONE, value)))
        with pytest.raises(pickle.UnpicklingError, match="may not hold"):
            unpack(frame, limit=1000)
    with pytest.raises(ValueError):  # util.plainsize refuses what is not plain data
        pack(Message(Tag.DONE, print), limit=1000)


KIND_TEXT = re.compile(r"""error_kind\(job\) (?:==|in) (\([^)]*\)|"[^"]*")|plain=(\([^)]*\))""")


def test_the_kinds_pages_branch_on_are_kinds():
    """Pages cannot import the workers (an import-linter contract): they name a kind by its
    value, which must be one, and never an exception's class name."""
    seen = set()
    for path in [*(SRC / "ui").rglob("*.py"), *(SRC / "services").rglob("*.py")]:
        text = path.read_text()
        assert "error_type" not in text, path
        for match in KIND_TEXT.finditer(text):
            found = ast.literal_eval(next(g for g in match.groups() if g))
            for kind in (found,) if isinstance(found, str) else found:
                assert kind in set(ErrorKind), (path, kind)
                seen.add(kind)
    assert {"data", "device", "value", "checkpoint", "size", "device_memory"} <= seen
