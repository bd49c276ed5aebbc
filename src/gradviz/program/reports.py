"""What a run reports besides its tensors and graph, as small frozen dataclasses: PyTorch's
warnings (RunWarning), the leaves moved to another device (DeviceMove) and its figures
(RunStats).

They cross from a worker to the server inside a pickled gradviz.program.results.Trace, so
they are plain data: no torch here (and no Streamlit), nothing imported from gradviz. The
command line's JSON (Trace.to_json, in the README) writes warnings with `to_dict`, exactly
the objects it has always written.
"""

from __future__ import annotations

from dataclasses import dataclass


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
class DeviceMove:
    """A leaf made on another device than the program said (RunOptions.device_overrides)."""

    name: str
    line: int
    from_device: str
    to_device: str


@dataclass(frozen=True)
class RunStats:
    """A run's figures: time, and what its budget counted (gradviz.program.budget)."""

    seconds: float = 0.0
    operations: int = 0
    statements: int = 0
    bytes: int = 0  # produced by all operations together
    flops: float = 0.0
    result_bytes: int | None = None  # the pickled Trace (results.cap_result)
    # set when the worker did not finish the run: timeout | memory | died | error
    worker: str | None = None
