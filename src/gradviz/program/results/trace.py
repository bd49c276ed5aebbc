"""What a run gives back, as plain data: Trace, RunOptions, the caps on what a result may
carry (cap_result), and a gradient check's result (GradCheckResult). The graph inside a
Trace is gradviz.graph.model's; its error, warnings, device moves and figures are
gradviz.program.results.reports', its CUDA allocator figures gradviz.devices.info's.

No torch here (and no Streamlit): the server unpickles these from its workers and draws them
without importing PyTorch, which keeps the server process small (docs/BENCHMARKS.md, memory).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field, replace

from gradviz.devices.info import CudaMemory
from gradviz.graph.model import (
    MAX_RESULT_VALUES,
    MAX_TENSORS_WITH_VALUES,
    BackwardRecord,
    GraphModel,
    TensorInfo,
    ValueBudget,
)
from gradviz.program.results.calls import BackwardCalls
from gradviz.program.results.limits import DEFAULT_LIMITS, Limits
from gradviz.program.results.reports import (
    DeviceMove,
    ParameterUpdate,
    RunError,
    RunStats,
    RunWarning,
    ShownValue,
)
from gradviz.util import settings
from gradviz.util.format import fmt_bytes
from gradviz.util.plainsize import NotPlain, decoded_size


@dataclass
class Trace:
    source: str
    tensors: list[TensorInfo] = field(default_factory=list)
    error: RunError | None = None
    backward: list[BackwardRecord] = field(default_factory=list)
    stdout: list[str] = field(default_factory=list)
    # what the bare top-level expressions show, as a notebook's Out[line] (interpreter.outputs)
    shown: list[ShownValue] = field(default_factory=list)
    warnings: list[RunWarning] = field(default_factory=list)
    graph: GraphModel | None = None
    classic_dot: str | None = None
    stats: RunStats = field(default_factory=RunStats)
    simulated: bool = False  # CUDA devices in this run are simulated (gradviz.devices.simulated)
    moves: list[DeviceMove] = field(default_factory=list)  # leaves moved by device_overrides
    device_notes: list[str] = field(default_factory=list)
    memory: list[CudaMemory] = field(default_factory=list)  # real CUDA allocators after the run
    # what cap_result left out of this result, in words ("2,500 tensors: ...")
    summary: list[str] = field(default_factory=list)
    updates: list[ParameterUpdate] = field(default_factory=list)  # what optimizer steps changed
    # each backward call on its own (the first and the last few), for the call picker
    calls: BackwardCalls = field(default_factory=BackwardCalls)

    def tensor(self, name: str) -> TensorInfo | None:
        """The latest tensor bound to `name`."""
        found = [t for t in self.tensors if t.name == name]
        return found[-1] if found else None

    def at_call(self, number: int | None) -> Trace:
        """This result as backward call `number` (1-based; None: the last) shows it: that
        call's graph, tensors and walk-through. Itself when it kept no such call, or when
        the program ran backward once (its graph is the whole run's)."""
        call = self.calls.call(number)
        if call is None or (self.calls.count < 2 and number is None):
            return self
        return replace(self, graph=call.graph, tensors=call.graph.tensors, backward=[call.record])

    def to_json(self) -> dict:
        """The CLI's JSON: tensors, error and backward, as documented in the README."""
        last = self.backward[-1] if self.backward else None
        return {
            "tensors": [
                {
                    "name": t.label,
                    "shape": t.shape,
                    "dtype": t.dtype,
                    "device": t.device,
                    "requires_grad": t.requires_grad,
                    "is_leaf": t.is_leaf,
                    "value": t.value,
                    "grad": t.grad,
                    "line": t.line,
                }
                for t in self.tensors
            ],
            "error": None if self.error is None else self.error.to_dict(),
            "backward": None
            if last is None
            else {
                "output": last.target,
                "origin": last.origin,
                "gradient": last.gradient,
                "order": [s.fn for s in last.steps],
            },
            "stdout": self.stdout,
            "shown": [s.to_dict() for s in self.shown],
            "warnings": [w.to_dict() for w in self.warnings],
        }


# ---------------------------------------------------------------- what a result may carry

MAX_RESULT_BYTES = 8_000_000  # the pickled Trace; beyond it, less detail, then an error
# The Trace once unpickled in the server (util.plainsize.decoded_size): a pickle can be small
# and unpickle big (an empty list: 2 bytes, then 56). Beyond it, less detail, then an error.


def decoded_limit() -> int:
    """What one result may take once unpickled in the server, on this host (the profile's
    decoded_bytes: smaller on a public host, where every session may hold one)."""
    return settings.profile().decoded_bytes


def _count_values(value) -> int:
    """Numbers in a nested list (1 for a plain number, 0 for None), without recursion."""
    if value is None:
        return 0
    if not isinstance(value, list):
        return 1
    count, stack = 0, [value]
    while stack:
        v = stack.pop()
        for item in v:
            if isinstance(item, list):
                stack.append(item)
            else:
                count += 1
    return count


def result_size(trace: Trace) -> int:
    """The bytes the Trace takes pickled (what a worker sends and the server keeps)."""
    return len(pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL))


def _sizes(trace: Trace, limit: int) -> tuple[int, int | None]:
    """(bytes pickled, bytes once unpickled: more than `limit` when over it, None when the
    Trace is not plain data or nests too deep)."""
    try:
        decoded = decoded_size(trace, limit=limit)
    except NotPlain:
        return 0, None  # not pickled: nesting this deep would take pickle's recursion
    return result_size(trace), decoded


def _over(size: int, decoded: int | None, limit: int) -> bool:
    return size > MAX_RESULT_BYTES or decoded is None or decoded > limit


def _in_words(size: int, decoded: int | None, limit: int) -> str:
    """The result's sizes, as cap_result says them (decoded_size stops counting past limit)."""
    if decoded is None:
        return "nested too deep to be read back"
    read_back = f"more than {fmt_bytes(limit)}" if decoded > limit else fmt_bytes(decoded)
    return f"{fmt_bytes(size)}, {read_back} once read back in the server"


def cap_result(trace: Trace) -> Trace:
    """Bound what a result carries to the server, and say in trace.summary what was left out.

    Values (and gradients) are sent by graph.model's ValueBudget, the one rule for this
    limit: in order, each tensor that carries values keeps them while fewer than
    MAX_TENSORS_WITH_VALUES tensors have and its numbers fit in what is left of
    MAX_RESULT_VALUES; the others keep their shape and preview. The worker spends the same
    budget while it builds the graph (gradviz.graph.build), so for a graph it built this
    changes nothing: the same tensors keep their values. If the pickled Trace is still over
    MAX_RESULT_BYTES, or would take more than decoded_limit() once unpickled in the server
    (every list, string and record counted at its size there: util.plainsize), every value,
    the classic DOT, saved-tensor texts and backward steps are left out; if even that is too
    big, the result is an error. Both sizes are recorded in trace.stats (result_bytes,
    decoded_bytes). Plain data only: runs in the worker.
    """
    n = len(trace.tensors)
    limit = decoded_limit()
    budget = ValueBudget()
    for t in trace.tensors:
        if not budget.take(_count_values(t.value) + _count_values(t.grad)):
            t.value = t.grad = None
    kept = budget.kept
    cut = budget.left_out + (trace.graph.values_left_out if trace.graph is not None else 0)
    if cut:
        trace.summary.append(
            f"{n:,} tensors: values are shown for {kept:,} of them; the other {cut:,} show "
            f"their shape and first values only (a result carries the values of at most "
            f"{MAX_TENSORS_WITH_VALUES:,} tensors, {MAX_RESULT_VALUES:,} numbers in all)"
        )
    size, decoded = _sizes(trace, limit)
    if _over(size, decoded, limit):
        for t in trace.tensors:
            t.value = t.grad = None
        for node in getattr(trace.graph, "nodes", []):
            node.saved = []
        for record in trace.backward:
            record.steps = []
        for call in trace.calls.kept:
            call.record.steps = []
            for t in call.graph.tensors:
                t.value = t.grad = None
            for node in call.graph.nodes:
                node.saved = []
        trace.classic_dot = None
        trace.summary.append(
            f"the result was {_in_words(size, decoded, limit)}, over what a result may take "
            f"({fmt_bytes(MAX_RESULT_BYTES)}, {fmt_bytes(limit)} read back): values, "
            "saved tensors, backward steps and the classic view are left out"
        )
        size, decoded = _sizes(trace, limit)
    if _over(size, decoded, limit):
        nodes = len(getattr(trace.graph, "nodes", []))
        trace = Trace(
            source=trace.source,
            error=RunError(
                "limit",
                f"the result of this program is {_in_words(size, decoded, limit)} even without its "
                f"values (a graph of {nodes:,} nodes, {n:,} tensors); the limit is "
                f"{fmt_bytes(MAX_RESULT_BYTES)} ({fmt_bytes(limit)} read back)",
                hint="Draw less: fewer loop passes or operations, or fewer named tensors.",
            ),
            stats=trace.stats,
        )
        size, decoded = _sizes(trace, limit)
    trace.stats = replace(trace.stats, result_bytes=size, decoded_bytes=decoded)
    return trace


@dataclass
class RunOptions:
    backward: str | None = None  # name of a tensor to run backward on after the program
    backward_ones: bool = False  # use a ones-like gradient for a non-scalar output
    retain_intermediate: bool = False  # retain_grad() on every named non-leaf tensor
    classic: bool = True  # also build torchviz's classic DOT
    seed: int = 0
    limits: Limits = DEFAULT_LIMITS
    # None: simulate CUDA exactly when torch has no CUDA device (gradviz.devices.simulated)
    simulate_cuda: bool | None = None
    # leaf name (or "*" for every leaf) -> device: the interpreter moves those leaves when
    # they are bound, as if the program had made them there
    device_overrides: dict[str, str] | None = None
    # a long loop's middle passes skip the recording no result shows (gradviz.program.recording.quiet_passes);
    # False records every pass (what a run does again when that prediction failed)
    quiet_passes: bool = True


# ---------------------------------------------------------------- gradient checks (gradviz.program.gradcheck)


@dataclass
class LeafCheck:
    name: str
    line: int
    shown: list | float | None
    numerical: list | float
    max_abs_diff: float | None
    ok: bool


@dataclass
class GradCheckResult:
    ok: bool
    message: str
    gradcheck_passed: bool | None = None
    leaves: list[LeafCheck] = field(default_factory=list)
