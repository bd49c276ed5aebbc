"""Quiet passes: the middle passes of a long loop, run without the recording no result shows.

A 1,000-step training loop's result shows its first backward calls and its last ones
(gradviz.program.recording.steps), the tensors its first passes named and its last
(RunState.add_binding), and a walk-through of its last backward (gradviz.program.recording.backward).
What each pass records for those (a hook on each autograd node, the layers' calls naming the
nodes, the call's notes, the names each tensor's expression read) is most of what the loop
costs beyond PyTorch's own work, and a middle pass's is thrown away at the end.

So a pass of a `for` loop runs quiet, without that recording, when the run can tell nothing
of it will be shown:
- the loop goes over something whose length is known, or it ran before to its end (a loop
  over the program's own generator, a `while`: d2l's `for X, y in data_iter(...)` in each
  epoch), and is predicted to run as many passes as it ran then; and its body has no
  `break` or `return` (barring an error, every pass runs);
- the loop has run NAMED_LOOP_PASSES passes in all, and the run has made its first kept
  backward calls;
- its previous pass made backward calls, and the passes after this one, making as many, make
  at least the last window's calls.
Everything else a pass does is the same: the same PyTorch calls with the same checks and
budgets, the same variables, the same printed text, `.grad` noted as accumulating.

That is a prediction. A loop whose length was not known may end sooner than the last time,
a later pass may make fewer calls (a backward under an `if`), or a
tensor from a quiet pass may still be shown at the end (kept in a variable the loop does not
bind again, or in the history of a later tensor). `missed` checks at the end of the run, and
where the prediction failed (or an error stopped the run after quiet passes) run_program
runs the program again with no quiet passes (RunOptions.quiet_passes): the run is
deterministic (its generator is seeded), so the result is always the one a run recording
every pass gives. The two runs together keep to the run's wall-clock limit.
"""

from __future__ import annotations

import ast

import torch

from gradviz.graph.record import walk_graph
from gradviz.program.recording.state import NAMED_LOOP_PASSES, RunState


def _current_sequence() -> int:
    """The sequence number autograd gives the next node made in this thread (nodes are
    numbered in the order they are made)."""
    with torch.enable_grad():
        return torch.empty(0, requires_grad=True).view(0).grad_fn._sequence_nr()


def _ends_early(body: list[ast.stmt]) -> bool:
    """Whether a loop body has a `break` or a `return` (in a loop inside it too: counted,
    though that `break` leaves only the inner loop)."""
    return any(isinstance(node, ast.Break | ast.Return) for stmt in body for node in ast.walk(stmt))


class QuietPasses:
    """Decides which loop passes run quiet (RunState.quiet while they run), and checks at
    the end that none of them was needed."""

    def __init__(self, state: RunState, enabled: bool):
        self.state = state
        self.enabled = enabled
        # by id(a loop statement), which the run's syntax tree keeps its own while the run
        # lasts (the statements themselves would tie the tree into the run's cycles):
        self.passes: dict[int, int] = {}  # its passes so far, in all
        self.early: dict[int, bool] = {}  # _ends_early(its body)
        # the passes its latest run made, for a loop whose length is not known first
        self.lengths: dict[int, int] = {}
        # autograd sequence numbers [start, end) of the nodes quiet passes made
        self.ranges: list[list[int]] = []

    def loop(self, stmt: ast.For | ast.While, length: int | None) -> LoopPasses:
        """The passes of one run of a loop (`length`: its passes, when known first; when
        not, as many as its latest run made, if it ran before)."""
        if not self.enabled:
            return LoopPasses(self, stmt, None)
        if length is not None:
            return LoopPasses(self, stmt, length)
        return LoopPasses(self, stmt, self.lengths.get(id(stmt)), predicted=True)

    def set(self, quiet: bool) -> None:
        """RunState.quiet from now on; a quiet stretch's nodes are noted by their numbers."""
        state = self.state
        if quiet == state.quiet:
            return
        if quiet:
            self.ranges.append([_current_sequence(), -1])
        else:
            self.ranges[-1][1] = _current_sequence()
        state.quiet = quiet

    # -- at the end

    def missed(self, failed: bool) -> bool:
        """Whether a quiet pass made something the result shows, or the run `failed` (an
        error) after quiet passes: then the run must be made again, recording every pass
        (an error's result shows the calls and the tensors as they were when it stopped)."""
        if not self.ranges:
            return False
        if failed:
            return True
        calls = self.state.calls
        if not calls.all_noted():
            return True
        bindings = [*self.state.bindings, *(b for p in calls.pending for b in p.bindings)]
        if any(b.quiet for b in bindings):
            return True
        return self._made_quiet(bindings)

    def _made_quiet(self, bindings: list) -> bool:
        """Whether the history of a tensor shown holds a node a quiet pass made."""
        roots = [fn for b in bindings for fn in (b.grad_fn, b.tensor.grad_fn) if fn is not None]
        ranges = self.ranges
        for fn in walk_graph(*roots):
            number = fn._sequence_nr()
            if any(start <= number < end for start, end in ranges):
                return True
        return False


class LoopPasses:
    """One run of a loop: `begin(number)` before each pass sets whether it is quiet; `end()`
    when the loop is left gives the run back the quiet it had around the loop."""

    def __init__(
        self,
        quiet: QuietPasses,
        stmt: ast.For | ast.While,
        length: int | None,
        predicted: bool = False,
    ):
        self.quiet = quiet
        self.key = id(stmt)
        self.length = length
        self.predicted = predicted  # `length` is the latest run's passes, not known first
        self.made = 0  # the passes begun
        self.around = quiet.state.quiet  # a quiet pass of an outer loop: this one is quiet too
        self.calls_before = quiet.state.calls.count  # at the start of the pass before
        if length is not None and self.key not in quiet.early:
            quiet.early[self.key] = _ends_early(stmt.body)

    def begin(self, number: int) -> None:
        quiet, state = self.quiet, self.quiet.state
        self.made = number + 1
        count = state.calls.count
        made, self.calls_before = count - self.calls_before, count  # by the pass before
        passes = quiet.passes[self.key] = quiet.passes.get(self.key, 0) + 1
        if self.around or self.length is None or quiet.early[self.key]:
            return
        calls = state.calls
        later = self.length - number - 1  # the passes after this one
        quiet.set(
            passes > NAMED_LOOP_PASSES
            and count >= calls.first
            and made > 0
            and later * made >= max(calls.last, 1)
        )

    def end(self) -> None:
        if self.predicted:
            self.quiet.lengths[self.key] = self.made
        if self.length is not None and not self.around:
            self.quiet.set(False)
