"""One message shape for every worker loop: requests, events, results and errors as plain
data, with the error's kind from one enumeration. The warm pool's workers
(gradviz.workers.pool), the job workers (gradviz.workers.jobs) and the ranks of a training
run in several processes (gradviz.training.distributed) all speak it.

- `Message(tag, value, error, retire)`: a request, a stop, a start (ready or broken), an
  event, a result (done) or an error. `value` is the request's (job, args, CPU seconds), the
  worker's resident bytes once ready, the event or the result.
- `WorkerError(kind, message, name, line, column)`: an error as data. `kind` is one of
  `ErrorKind` and is what callers branch on; `name` is the exception's class name, for the
  words shown to people only. Errors raised in a job say their kind: an exception class
  declares it as `error_kind = ErrorKind.X` (training's DataError, for one); otherwise
  `WorkerError.of` knows the few built-in ones (ValueError, MemoryError, torch's
  OutOfMemoryError, read from the process's modules, never imported here).
- On the pipe a message is a plain tuple of strings, numbers, None and the value
  (`encode`), read back by `decode`, which refuses a tag or a kind it does not know
  (ProtocolError). `send` and `receive` are the one way every loop writes and reads a
  connection; the pool, which bounds what it reads, frames its replies with `pack` (the
  count of what the message takes once unpickled, util.plainsize, then its pickle) and reads
  them with `unpack` (nothing over the count's limit is unpickled, and no class but
  gradviz's dataclasses).

No torch, no Streamlit here.
"""

from __future__ import annotations

import dataclasses
import io
import pickle
import struct
import sys
from dataclasses import dataclass
from enum import StrEnum

from gradviz.util.format import fmt_bytes
from gradviz.util.plainsize import decoded_size


class Tag(StrEnum):
    REQUEST = "request"  # to a pool worker: run (job, args, CPU seconds)
    STOP = "stop"  # to a job or rank 0: end at the next step
    READY = "ready"  # started under its limits; value: its resident bytes
    BROKEN = "broken"  # could not start (its caps do not hold); error says why
    EVENT = "event"  # a value the job yielded
    DONE = "done"  # the job's result
    ERROR = "error"  # the job or the worker failed; error says how


class ErrorKind(StrEnum):
    # raised in a job, and worded there for people
    DATA = "data"  # the images could not be found or read (training.sources.DataError)
    DEVICE = "device"  # the device asked for is not there (training.hardware.DeviceError)
    CHECKPOINT = "checkpoint"  # uploaded weights refused (training.checkpoint.CheckpointError)
    SIZE = "size"  # a size too large for the memory free (speed.memory.SizeTooLarge)
    VALUE = "value"  # a setting out of range (ValueError itself)
    # raised in a job, not worded for people
    HOST_MEMORY = "host_memory"  # an allocation refused by the process's cap (MemoryError)
    DEVICE_MEMORY = "device_memory"  # a device's allocator ran out (torch.OutOfMemoryError)
    FAILED = "failed"  # any other exception
    # the worker, seen from outside the job
    MEMORY = "memory"  # over the memory cap (its peak, or the parent's watchdog)
    GROWN = "grown"  # a pool worker grew too far since its start: the job runs in a fresh one
    RESULT = "result"  # the result could not be sent, or is over the limits on one


class ProtocolError(ValueError):
    """A message that is not in the protocol (an unknown tag or kind, a wrong shape)."""


@dataclass(frozen=True)
class WorkerError:
    kind: ErrorKind
    message: str
    name: str = ""  # the exception's class name, shown to people, never compared
    line: int | None = None
    column: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ErrorKind):
            raise ProtocolError(f"an error's kind must be an ErrorKind, not {self.kind!r}")

    @classmethod
    def of(cls, exc: BaseException, limit: int = 2000) -> WorkerError:
        """An exception as data: its kind, the first `limit` characters of its message, its
        class name, and its line and column where it has them."""
        line = getattr(exc, "line", None)
        line = getattr(exc, "lineno", None) if line is None else line
        column = getattr(exc, "col", None)
        column = getattr(exc, "offset", None) if column is None else column
        return cls(
            kind_of(exc),
            str(exc)[:limit],
            type(exc).__name__,
            line if type(line) is int else None,
            column if type(column) is int else None,
        )

    def text(self) -> str:
        """The error as a traceback's last line says it, "Name: message" (no name: the message)."""
        return f"{self.name}: {self.message}" if self.name else self.message

    def plain(self) -> dict:
        return {
            "kind": self.kind.value,
            "message": self.message,
            "name": self.name,
            "line": self.line,
            "column": self.column,
        }

    @classmethod
    def from_plain(cls, data: object) -> WorkerError:
        if not isinstance(data, dict) or set(data) != {"kind", "message", "name", "line", "column"}:
            raise ProtocolError("an error is a dict of kind, message, name, line and column")
        try:
            kind = ErrorKind(data["kind"])
        except ValueError:
            raise ProtocolError(f"unknown error kind {data['kind']!r}") from None
        if not isinstance(data["message"], str) or not isinstance(data["name"], str):
            raise ProtocolError("an error's message and name are text")
        for where in (data["line"], data["column"]):
            if where is not None and type(where) is not int:
                raise ProtocolError("an error's line and column are whole numbers")
        return cls(kind, data["message"], data["name"], data["line"], data["column"])


def kind_of(exc: BaseException) -> ErrorKind:
    """The kind an exception's class declares (`error_kind`), else what the built-in ones are."""
    declared = getattr(type(exc), "error_kind", None)
    if isinstance(declared, ErrorKind):
        return declared
    if type(exc) is ValueError:
        return ErrorKind.VALUE
    if type(exc) is MemoryError:
        return ErrorKind.HOST_MEMORY
    torch = sys.modules.get("torch")  # a torch error exists only where torch is imported
    device_oom = getattr(torch, "OutOfMemoryError", None)
    if isinstance(device_oom, type) and isinstance(exc, device_oom):
        return ErrorKind.DEVICE_MEMORY
    return ErrorKind.FAILED


@dataclass(frozen=True)
class Message:
    tag: Tag
    value: object = None
    error: WorkerError | None = None
    retire: bool = False  # the worker ends after this one (its state is no longer its start's)

    def __post_init__(self) -> None:
        if not isinstance(self.tag, Tag):
            raise ProtocolError(f"a message's tag must be a Tag, not {self.tag!r}")
        if (self.error is not None) != (self.tag in (Tag.ERROR, Tag.BROKEN)):
            raise ProtocolError(
                f"a {self.tag.value} message {'lacks' if self.error is None else 'has'} an error"
            )


def failed(error: WorkerError, retire: bool = False) -> Message:
    return Message(Tag.ERROR, error=error, retire=retire)


def encode(message: Message) -> tuple:
    """The message as plain data: (tag, value, error as a dict or None, retire)."""
    error = None if message.error is None else message.error.plain()
    return (message.tag.value, message.value, error, message.retire)


def decode(data: object) -> Message:
    """A message from its plain form; ProtocolError for anything else."""
    if not isinstance(data, tuple) or len(data) != 4:
        raise ProtocolError("a message is a tuple of tag, value, error and retire")
    tag, value, error, retire = data
    try:
        tag = Tag(tag)
    except ValueError:
        raise ProtocolError(f"unknown message tag {tag!r}") from None
    if type(retire) is not bool:
        raise ProtocolError("a message's retire is True or False")
    return Message(tag, value, None if error is None else WorkerError.from_plain(error), retire)


def send(conn, message: Message) -> None:
    conn.send(encode(message))


def receive(conn) -> Message:
    return decode(conn.recv())


# ---------------------------------------------------------------- a bounded reply

COUNT = struct.Struct("<Q")  # what the message takes once unpickled, ahead of its pickle


class PlainUnpickler(pickle.Unpickler):
    """Unpickles plain data and gradviz's dataclasses only, from modules this process has
    imported already: no function, no other class, no import."""

    def find_class(self, module: str, name: str):
        if module.startswith("gradviz.") and module in sys.modules and "." not in name:
            found = super().find_class(module, name)  # already imported: imports nothing
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise pickle.UnpicklingError(f"a result may not hold {module}.{name}")


def pack(message: Message, limit: int) -> tuple[bytes, int]:
    """The message framed for a bounded read: its count (what its plain form takes once
    unpickled; counting stops past `limit`), then its pickle; and that count. Raises NotPlain
    (a ValueError), TypeError or pickle.PicklingError when it is not plain data."""
    data = encode(message)
    count = decoded_size(data, limit=limit)
    return COUNT.pack(count) + pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL), count


def unpack(frame: bytes, limit: int) -> Message:
    """A message from `pack`'s frame, unpickled only when the count it declares is within
    `limit` (the frame's length is the reader's to bound), allowing no class but gradviz's
    dataclasses. pickle.UnpicklingError, ProtocolError (a ValueError), struct.error or
    EOFError for a frame that is not one."""
    (count,) = COUNT.unpack_from(frame)
    if count > limit:
        raise pickle.UnpicklingError(f"the result declares {fmt_bytes(count)} once read back")
    return decode(PlainUnpickler(io.BytesIO(memoryview(frame)[COUNT.size :])).load())
