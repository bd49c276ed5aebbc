"""What a run reports besides its tensors and graph, as small frozen dataclasses: its error
(RunError, with ErrorDetails and, for a device error, DeviceErrorDetails), PyTorch's
warnings (RunWarning), the leaves moved to another device (DeviceMove), what optimizer steps
changed (ParameterUpdate) and its figures (RunStats).

They cross from a worker to the server inside a pickled gradviz.program.results.trace.Trace, so
they are plain data: no torch here (and no Streamlit), nothing imported from gradviz.
gradviz.program.syntax.checker's ProgramError, the exception the interpreter raises, carries
ErrorDetails and gives its RunError (`ProgramError.report()`). The command line's JSON
(Trace.to_json, in the README) writes errors and warnings with `to_dict`, exactly the
objects it has always written.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DeviceErrorDetails:
    """A device error explained (gradviz.devices.errors.explain_device_error)."""

    kind: str  # device_mismatch | cuda_index_mismatch | index_device | numpy_cuda | no_cuda
    rule: str  # the rule broken, in words
    devices: tuple[str, ...] = ()
    tensors: tuple[tuple[str, str], ...] = ()  # (name or source text, device) per operand
    move: str | None = None  # the tensor to move
    fix_code: str = ""  # one line of code that fixes it
    source: str = ""  # where the message came from: simulated, a real GPU, this machine


@dataclass(frozen=True)
class ErrorDetails:
    """What gradviz knows about an error beyond its message; every part is optional."""

    exception: str | None = None  # the class of the exception torch raised
    operation: str | None = None  # the operation that raised it ("+", "torch.matmul", ...)
    explanation: str | None = None  # the key of gradviz.program.results.explain's explanation
    title: str | None = None
    fix: str | None = None  # Markdown: gradviz's own, with program text only as mdtext.code
    device: DeviceErrorDetails | None = None
    worker: str | None = None  # the signal that killed the worker running the program
    # other places the error comes from, (line, column): the in-place change backward
    # tripped over (gradviz.program.recording.inplace)
    also: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict:
        """The `details` object of the command line's JSON: the parts this error has, with
        the keys and in the order they have always been written."""
        out: dict = {}
        if self.exception is not None:
            out.update(exception=self.exception, operation=self.operation)
        if self.explanation is not None:
            out.update(explanation=self.explanation, title=self.title, fix=self.fix)
        if self.device is not None:
            d = self.device
            out.update(
                device_kind=d.kind,
                device_rule=d.rule,
                devices=list(d.devices),
                device_tensors=dict(d.tensors),
                move=d.move,
                fix_code=d.fix_code,
            )
            out.update(title=self.title, fix=self.fix, device_source=d.source)
        for key in ("title", "fix"):
            if key not in out and getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.worker is not None:
            out["worker"] = self.worker
        return out


@dataclass(frozen=True)
class RunError:
    """Why a program stopped (or was refused), and where: line and column are 1-based
    characters in the program's text; None where the error has no place (a worker's death)."""

    kind: str  # syntax | forbidden | name | limit | type | runtime | internal
    message: str
    line: int | None = None
    col: int | None = None
    hint: str | None = None  # gradviz's own Markdown
    details: ErrorDetails = field(default_factory=ErrorDetails)

    def to_dict(self) -> dict:
        """The `error` object of the command line's JSON."""
        return {
            "kind": self.kind,
            "message": self.message,
            "line": self.line,
            "col": self.col,
            "hint": self.hint,
            "details": self.details.to_dict(),
        }


# The plain title of each kind of error, as the pages head it (the kinds are words of the code).
KIND_TITLES = {
    "syntax": "Syntax error",
    "forbidden": "Not part of this language",
    "name": "Unknown name",
    "limit": "Size limit",
    "type": "Type mismatch",
    "runtime": "Error while running",
    "internal": "Error in gradviz",
}


def kind_title(kind: str) -> str:
    """An error kind's title for a reader: "Unknown name" for "name"."""
    return KIND_TITLES.get(kind, "Error")


@dataclass(frozen=True)
class RunWarning:
    """A warning PyTorch gave while a statement ran."""

    line: int
    message: str  # its first line
    category: str  # the warning's class, e.g. "UserWarning"

    def to_dict(self) -> dict:
        """One of the `warnings` of the command line's JSON."""
        return {"line": self.line, "message": self.message, "category": self.category}


@dataclass(frozen=True)
class ShownValue:
    """What a notebook shows under a bare expression at the top level of a program (`x.device`,
    `net(X)`): the value's repr, as `Out[line]`, cut short past MAX_SHOWN_CHARS."""

    line: int
    text: str

    def out(self) -> str:
        """As IPython writes it: `Out[5]: 2.5`; a value of several lines starts on the next."""
        return f"Out[{self.line}]:{chr(10) if chr(10) in self.text else ' '}{self.text}"

    def to_dict(self) -> dict:
        """One of the `shown` of the command line's JSON."""
        return {"line": self.line, "text": self.text}


@dataclass(frozen=True)
class DeviceMove:
    """A leaf made on another device than the program said (RunOptions.device_overrides)."""

    name: str
    line: int
    from_device: str
    to_device: str


@dataclass(frozen=True)
class ParameterUpdate:
    """One parameter an optimizer step changed: its values before and after, as previews."""

    line: int
    optimizer: str  # what the program calls it ("opt") and its class ("SGD")
    name: str  # the parameter as the graph names it ("net.0.weight")
    before: str
    after: str


@dataclass(frozen=True)
class RunStats:
    """A run's figures: time, and what its budget counted (gradviz.program.budgets.precheck)."""

    seconds: float = 0.0
    operations: int = 0
    statements: int = 0
    bytes: int = 0  # produced by all operations together
    flops: float = 0.0
    result_bytes: int | None = None  # the pickled Trace (results.cap_result)
    # the Trace once unpickled in the server (results.cap_result, util.plainsize)
    decoded_bytes: int | None = None
    # set when the worker did not finish the run: timeout | memory | died | error
    worker: str | None = None
