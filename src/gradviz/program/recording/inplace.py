"""In-place changes a program made to its tensors (runs in workers: torch).

`y += 1`, `y.add_(1)` and `y[0] = 5` change a tensor autograd may have saved; PyTorch then
fails in backward() ("... is at version 1; expected version 0"), at the backward line. The
log watches every in-place operation (gradviz.program.runtime.torch_calls.Library.call): when it bumped
a tensor's version counter, it notes where, and, for a named tensor small enough to be sent
in full, keeps a copy of its values before the change, so the graph shows each node's value
as it was when it was made (gradviz.graph.build)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from gradviz.graph.model import MAX_STORED_ELEMENTS

MAX_SNAPSHOTS = 200  # copies kept per run
MAX_EVENTS = 1000
MAX_LABELS = 4096  # call labels whose answer `watches` keeps
_CHANGES: dict[str, bool] = {}  # by a call's label: whether it names an in-place change


@dataclass
class InplaceEvent:
    line: int | None
    col: int | None
    text: str  # the statement's source
    before: int  # the version counter before and after
    after: int


@dataclass
class InplaceLog:
    events: list[InplaceEvent] = field(default_factory=list)
    # (id(tensor), version) -> (the tensor, kept alive so its id is not reused; a copy of
    # the values it had at that version)
    snapshots: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = field(
        default_factory=dict
    )

    @staticmethod
    def watches(label: str, args: tuple) -> bool:
        changes = _CHANGES.get(label)
        if changes is None:
            changes = label.endswith(("_()", "=")) or label == "item assignment"
            if len(_CHANGES) < MAX_LABELS:
                _CHANGES[label] = changes
        return changes and bool(args) and isinstance(args[0], torch.Tensor)

    def before(self, tensor: torch.Tensor, bound: bool) -> tuple:
        """What to compare after the call: the version, and a copy when `bound` (a name was
        bound to the tensor at this version: its node shows these values)."""
        copy = None
        if (
            bound
            and len(self.snapshots) < MAX_SNAPSHOTS
            and tensor.numel() <= MAX_STORED_ELEMENTS
            and tensor.device.type != "meta"
        ):
            copy = tensor.detach().clone()
        return tensor, tensor._version, copy

    def after(self, token: tuple, where: Callable[[], tuple[int | None, int | None, str]]) -> None:
        """Note the change, if the call made one; `where()` gives its (line, column, source
        text), asked only while the log has room for it."""
        tensor, version, copy = token
        if tensor._version == version:
            return
        if copy is not None:
            self.snapshots.setdefault((id(tensor), version), (tensor, copy))
        if len(self.events) < MAX_EVENTS:
            self.events.append(InplaceEvent(*where(), version, tensor._version))

    def culprits(self, message: str) -> list[InplaceEvent]:
        """The in-place changes that could have moved a saved tensor from the version
        backward expected to the one it found, as PyTorch's message names them."""
        m = re.search(r"is at version (\d+); expected version (\d+)", message)
        if m is None:
            return []
        found, expected = int(m.group(1)), int(m.group(2))
        hits = [e for e in self.events if e.before == expected and e.after <= found]
        return list({(e.line, e.col): e for e in hits}.values())[-3:]
