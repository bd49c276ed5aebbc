"""The state one program run shares between the interpreter's parts.

A `RunState` is made per run (gradviz.program.interpreter.statements.Interpreter makes it) and every
part holds a reference to the same one: the evaluator, the library, the budget, the device
placement and the backward watch. It owns what the run has made so far (the variables,
the tensors bound to names, printed text, warnings, the backward passes), the node being
run (so an error can say where it happened), where each tensor lives (its real device,
or the simulated one), the layers' calls the graph groups (`module_calls`, `fn_modules`),
what optimizer steps changed (`updates`), the scope being run (`Scope`: the program's own
variables, or a call of one of its functions) and the passes of the loops around the
statement being run. It makes no decisions of its own; `torch_rng` lends the run's generator
to library code that draws from torch's global one.
"""

from __future__ import annotations

import ast
import contextlib

import torch

from gradviz.devices import simulated as devices
from gradviz.graph.model import BackwardRecord, ModuleCall
from gradviz.graph.record import Binding, NodeRegistry
from gradviz.program.recording.grad_fns import GradFns
from gradviz.program.recording.inplace import InplaceLog
from gradviz.program.recording.steps import CallWatch
from gradviz.program.results.reports import ParameterUpdate, RunWarning, ShownValue
from gradviz.program.results.trace import RunOptions
from gradviz.program.syntax.program_error import ProgramError, char_col, source_segment

# A loop's tensors are named on the graph for its first passes, then only its latest one
# (loss[0] ... loss[9], loss[999]): a long loop does not bury the graph in names.
NAMED_LOOP_PASSES = 10
# bound tensors whose names name_of keeps (a program names a few thousand at most)
MAX_NAMES = 10_000
# segment texts a run keeps (one per node and length asked; a program has a few thousand nodes)
MAX_SEGMENTS = 20_000
# the first address made_up_address gives, 0x40 above it (below them: the autograd nodes'
# of gradviz.program.recording.grad_fns and the hook handles' of gradviz.program.objects.hooks)
SHOWN_ADDRESS = 0x7F2000000000


class Scope:
    """The variables of the program (at the top) or of one call of a program's function.

    A function reads through to the scope it was defined in (`parent`), as Python's closures
    do: late, seeing the variable's value at the time of the read. The names a function
    assigns anywhere in its body (`local`) are its own from the start: reading one before it
    is assigned is an error, as in Python, not a read of the outer variable.
    """

    def __init__(
        self,
        names: dict[str, object],
        parent: Scope | None = None,
        local: frozenset[str] = frozenset(),
        owner: str = "",
    ):
        self.names = names
        self.parent = parent
        self.local = local
        self.owner = owner  # the function whose call this is ("" at the top)
        # the names the function declared `global` or `nonlocal`: the scope each lives in
        self.outer: dict[str, Scope] = {}

    def home(self, name: str) -> Scope:
        """The scope a name is bound in when this scope binds it."""
        return self.outer.get(name, self)


class RunState:
    """What one run has made so far, and where it is."""

    def __init__(
        self,
        source: str,
        options: RunOptions,
        leaf_overrides: dict[tuple[str, int], torch.Tensor] | None = None,
        skip_backward: bool = False,
    ):
        self.lines = source.splitlines()
        self._segments: dict[tuple[ast.AST, int], str] = {}  # segment's, by (node, max_len)
        # the names each expression reads (gradviz.program.recording.sources), by the expression
        self.names_read: dict[ast.AST, tuple[str, ...]] = {}
        self.options = options
        self.limits = options.limits
        self.env: dict[str, object] = {}
        self.bindings: list[Binding] = []
        # (id(tensor), version) -> how many of `bindings` hold it: bound_now's answer in one
        # look-up (the bindings keep their tensors alive, so no other tensor takes the id)
        self._bound: dict[tuple[int, int], int] = {}
        # id(tensor) -> (tensor, name_of's answer), for a bound leaf asked for again (a
        # loop's parameters, named at each pass's backward; a result such as a loss is
        # asked for once, and bound again at the next pass); an entry goes when a binding
        # of its tensor is added or replaced
        self._names: dict[int, tuple[torch.Tensor, str]] = {}
        self.stdout: list[str] = []
        # the values bare top-level expressions show (gradviz.program.interpreter.outputs)
        self.shown: list[ShownValue] = []
        self.warnings: list[RunWarning] = []
        self.backward: list[BackwardRecord] = []
        self.registry = NodeRegistry()
        self.module_calls: list[ModuleCall] = []
        self.fn_modules: dict[int, tuple[object, str]] = {}  # id(autograd node) -> (node, call)
        # id(autograd node) -> (node, the saved tensors it held before a backward pass ran
        # through it): RunRecord.saved_before, from program.recording
        self.saved_before: dict[int, tuple[object, frozenset[str]]] = {}
        self.open_calls: list[str] = []  # the calls of the program's own modules running
        self.updates: list[ParameterUpdate] = []
        self.grad_fns = GradFns()  # the autograd nodes the program has read (t.grad_fn)
        self.inplace = InplaceLog()  # in-place changes, and values from before them
        self.seed = options.seed
        self.generator = torch.Generator().manual_seed(options.seed)
        # the run's generators on real CUDA devices (generator_for), made on first use
        self.device_generators: dict[str, torch.Generator] = {}
        self.leaf_overrides = leaf_overrides or {}
        self.no_grad_depth = 0
        self.skip_backward = skip_backward  # gradient checks re-run programs without backward()
        self.in_backward = False  # a backward pass is running (the program's hooks may run)
        self.hooks_made = 0  # tensor hooks the program has registered (t.register_hook)
        self.addresses_given = 0  # the objects made_up_address has numbered
        self.node: ast.AST | None = None
        self.globals = Scope(self.env)
        self.scope = self.globals  # the scope being run: the program's, or a call's
        self.loops: list[int] = []  # the pass each loop around this statement is on
        # a pass whose recording no result shows is running (gradviz.program.recording.quiet_passes)
        self.quiet = False
        # (name, line) -> [its bindings so far, the slot of its latest one in `bindings`]
        self._loop_slots: dict[tuple[str, int], list[int]] = {}
        simulate = options.simulate_cuda
        self.simulated = devices.simulation_needed() if simulate is None else bool(simulate)
        self.shadow = devices.FakeShadow() if self.simulated else None
        self.calls = CallWatch(self)  # each backward call and optimizer step, for the picker

    # -- where the run is, for error messages

    def error(self, kind: str, message: str, node: ast.AST | None = None, hint: str | None = None):
        node = node or self.node
        line = getattr(node, "lineno", None)
        col = char_col(self.lines, line, getattr(node, "col_offset", None))
        return ProgramError(kind, message, line, col, hint)

    def where(self, node: ast.AST) -> tuple[int | None, int | None, str]:
        """(line, column, source text) of a node, as errors name them."""
        line = getattr(node, "lineno", None)
        col = char_col(self.lines, line, getattr(node, "col_offset", None))
        return line, col, self.segment(node)

    def segment(self, node: ast.AST, max_len: int = 60) -> str:
        """source_segment, once per node and length: a loop asks for the same ones each pass
        (the node itself is the key, held, so no other node can take its id)."""
        key = (node, max_len)
        text = self._segments.get(key)
        if text is None:
            text = source_segment(self.lines, node, max_len)
            if len(self._segments) < MAX_SEGMENTS:
                self._segments[key] = text
        return text

    def forget_syntax(self) -> None:
        """Let go of the program's syntax tree once the run is over (run_program's
        _release): the caches keyed by its nodes and the node being run. The run's parts
        refer to each other, so what they hold is freed only by the cyclic garbage
        collector, and it reads every object it frees: a 1,000-line program's tree is
        15,000 objects, the larger part of the collection that follows a run. The tensors
        name_of keeps with their names go too (the bindings go next)."""
        self._segments.clear()
        self.names_read.clear()
        self._names.clear()
        self.node = None

    # -- what the run holds

    def add_binding(self, binding: Binding) -> None:
        """A tensor bound to a name. Inside loops, the first NAMED_LOOP_PASSES bindings of a
        (name, line) are kept, then only the latest (it replaces the one before it)."""
        bound = self._bound
        held = (id(binding.tensor), binding.version)
        names = self._names
        if names:
            names.pop(held[0], None)
        if not binding.step:
            bound[held] = bound.get(held, 0) + 1
            self.bindings.append(binding)
            return
        key = (binding.name, binding.line)
        entry = self._loop_slots.get(key)  # [bindings so far, the slot of the latest]
        if entry is None:
            entry = self._loop_slots[key] = [0, -1]
        seen, slot = entry
        entry[0] = seen + 1
        if seen < NAMED_LOOP_PASSES or slot < 0:
            bound[held] = bound.get(held, 0) + 1
            if seen >= NAMED_LOOP_PASSES:
                entry[1] = len(self.bindings)
            self.bindings.append(binding)
            return
        bindings = self.bindings
        old = bindings[slot]
        gone = (id(old.tensor), old.version)
        if names:
            names.pop(gone[0], None)
        if gone != held:  # the same tensor as it was (a loop's `for p in params`): no change
            bound[held] = bound.get(held, 0) + 1
            if bound[gone] == 1:
                del bound[gone]
            else:
                bound[gone] -= 1
        bindings[slot] = binding

    def name_of(self, tensor: torch.Tensor) -> str | None:
        """The name of the latest binding (by its place in `bindings`) that holds `tensor`."""
        hit = self._names.get(id(tensor))
        if hit is not None and hit[0] is tensor:
            return hit[1]
        for b in reversed(self.bindings):
            if b.tensor is tensor:
                if tensor.grad_fn is None and len(self._names) < MAX_NAMES:
                    self._names[id(tensor)] = (tensor, b.name)
                return b.name
        return None

    def bound_now(self, tensor: torch.Tensor) -> bool:
        """Whether a name was bound to `tensor` as it is now (at its current version)."""
        return (id(tensor), tensor._version) in self._bound

    def made_up_address(self) -> int:
        """The address an object's repr shows where Python shows its id() (`Generator(PCG64)
        at 0x7F2000000040`): numbered in the order the run first shows such objects, so the
        same on every run, and never the object's real address, which would tell a program
        where the worker's memory lies."""
        self.addresses_given += 1
        return SHOWN_ADDRESS + 0x40 * self.addresses_given

    def manual_seed(self, seed: int) -> None:
        """torch.manual_seed inside the program: the run's own generators, every device's
        (as torch.manual_seed seeds each device), not torch's."""
        self.seed = seed
        self.generator.manual_seed(seed)
        for generator in self.device_generators.values():
            generator.manual_seed(seed)

    def generator_for(self, device: torch.device) -> torch.Generator:
        """The run's generator for random numbers made on `device`. A real CUDA device gets
        its own, seeded as torch.manual_seed seeds each device (PyTorch refuses a CPU
        generator there); on the CPU and on simulated CUDA (values made on the CPU), the
        run's CPU generator."""
        if device.type != "cuda" or self.shadow is not None:
            return self.generator
        index = device.index if device.index is not None else torch.cuda.current_device()
        key = f"cuda:{index}"
        if key not in self.device_generators:
            self.device_generators[key] = torch.Generator(device=key).manual_seed(self.seed)
        return self.device_generators[key]

    def device_of(self, t: torch.Tensor) -> str:
        """Where a tensor lives: its real device, or the simulated one PyTorch's rules gave it."""
        return str(self.shadow.device_of(t) if self.shadow is not None else t.device)

    @contextlib.contextmanager
    def torch_rng(self):
        """torch's global CPU generator holds the run's own state while open, and gets its
        own back after: layer initialisation, dropout and DataLoader shuffling draw from it,
        so they draw the numbers the same program would in PyTorch after
        torch.manual_seed, and touch nothing outside the run."""
        outside = torch.get_rng_state()  # what fork_rng(devices=[]) keeps, without its
        torch.set_rng_state(self.generator.get_state())  # checks (half of the cost: 26
        try:  # times in a small CNN's run)
            yield
        finally:
            self.generator.set_state(torch.get_rng_state())
            torch.set_rng_state(outside)
