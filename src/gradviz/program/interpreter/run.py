"""Checked program -> Trace. gradviz's own interpreter for the program language.

The interpreter walks the checked AST and performs each step itself against the
tables in gradviz.program.allowlists.tables: there is no eval, exec or compile of user text. Before a
tensor operation runs for real it runs on "meta" tensors (shapes only, no data) under
torch's FLOP counter, so sizes and matrix work are checked before anything is
allocated. The result of a run is a Trace: plain data, safe to cache, pickle or send
across a process boundary.

This module is the entry point (`run_program`); gradviz.program.interpreter.statements
runs the statements (`Interpreter`). The other parts of a run, each holding the
same gradviz.program.recording.state.RunState:

- gradviz.program.interpreter.control: `if`, `for`, `while`, `break`, `continue`, `assert`;
- gradviz.program.interpreter.expressions: expressions, with gradviz.program.runtime.comprehensions,
  gradviz.program.runtime.strings (printing, f-strings, `%`), gradviz.program.runtime.containers (lists,
  tuples, dicts, strings), gradviz.program.runtime.builtins (Python's built-ins, `math`) and
  gradviz.program.runtime.functions (the program's own functions and their calls); the classes of
  `nn`, `optim` and `torch.utils.data` go to gradviz.program.objects.makers (layers, optimizers,
  data);
- gradviz.program.runtime.iteration: what loops go over, and truth;
- gradviz.program.runtime.torch_calls: calls into torch and tensor methods, through the allow-lists
  (gradviz.program.runtime.values holds the namespaces and what a program may hold);
- gradviz.program.budgets.precheck: the size, work and statement caps on tensors and layers, checked
  before work runs; gradviz.program.budgets.language_caps: the caps on the language's own work (steps, loop
  passes, call depth, containers, strings, wall time);
- gradviz.program.runtime.placement: simulated CUDA and where each tensor lives;
- gradviz.program.recording.backward: backward passes, watched node by node;
- gradviz.program.runtime.errors: torch's errors as the program sees them.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import gc
import time

import torch

from gradviz.devices import simulated as devices
from gradviz.graph.build import build_graph
from gradviz.graph.values import remembered
from gradviz.program.interpreter.statements import RESERVED_NAMES, Interpreter
from gradviz.program.results.reports import RunStats
from gradviz.program.results.trace import RunOptions, Trace
from gradviz.program.syntax.checker import parse
from gradviz.program.syntax.program_error import ProgramError, did_you_mean


def _without_gc(fn):
    """Run without the cyclic garbage collector: a run allocates many small objects,
    and a full collection in the middle (tens of ms with torch loaded) was the largest
    single cost of big programs. Collection resumes afterwards."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return wrapper


@_without_gc
def run_program(source: object, options: RunOptions | None = None) -> Trace:
    """Parse, check and run a program. Never raises for anything a user typed."""
    options = options or RunOptions()
    started = time.perf_counter()
    text = source if isinstance(source, str) else ""
    try:
        tree = parse(source, options.limits, RESERVED_NAMES)
    except ProgramError as exc:
        return Trace(source=text, error=exc.report(), stats=RunStats(time.perf_counter() - started))
    interp, error = _run(text, tree, options)
    if interp.control.quiet.missed(error is not None):
        # a quiet pass was needed after all: run again recording every pass, both runs
        # together within the wall-clock limit
        deadline = interp.quotas.deadline
        _release(interp)
        again = dataclasses.replace(options, quiet_passes=False)
        interp, error = _run(text, tree, again, deadline)
    with remembered():  # the run's graph and its backward calls' share many tensors
        interp.library.watch.finish()
        record = interp.record()
        calls = interp.state.calls.finish(interp.placement.fn_devices)
        graph = build_graph(record)
        interp.state.calls.only_call(calls, graph)
    state, budget, placement = interp.state, interp.budget, interp.placement
    trace = Trace(
        source=text,
        tensors=graph.tensors,
        error=None if error is None else error.report(),
        backward=state.backward,
        stdout=state.stdout,
        shown=state.shown,
        # a warning the error repeats at its line (a None `.grad` read, then used) is said once
        warnings=[
            w
            for w in state.warnings
            if error is None or (w.line, w.message) != (error.line, error.message)
        ],
        graph=graph,
        simulated=state.simulated,
        moves=placement.moves,
        device_notes=placement.device_notes,
        updates=state.updates,
        calls=calls,
        memory=devices.memory_summary(),
        stats=RunStats(
            seconds=time.perf_counter() - started,
            operations=budget.ops,
            statements=budget.statements,
            bytes=budget.total_bytes,
            flops=budget.total_flops,
        ),
    )
    if options.classic:
        from gradviz.graph.classic import classic_dot  # torchviz: only for the classic view

        trace.classic_dot = classic_dot(record)
    _release(interp)
    return trace


def _run(text: str, tree: ast.Module, options: RunOptions, deadline: float | None = None):
    """(the interpreter, the error that stopped it or None) of one run of a parsed program
    (`deadline`: the end of its wall-clock limit, perf_counter's, when not its own)."""
    interp = Interpreter(text, tree, options)
    if deadline is not None:
        interp.quotas.deadline = deadline
    error = _guarded(interp.run, interp)
    if error is None and options.backward:
        error = _guarded(lambda: requested_backward(interp, options), interp)
    return interp, error


def _release(interp: Interpreter) -> None:
    """Drop what the run held once its result is built: the autograd nodes (a loop's
    thousands), the layers' calls, the named tensors and the program's variables. The
    interpreter's parts refer to each other, so without this only the cyclic garbage
    collector frees them, after the run, in whatever the process does next (40 to 70 ms
    after a 1,000-step loop); freed here, the collector finds little."""
    state = interp.state
    interp.tree = None
    interp.bind_plans.clear()  # they hold the expressions shown
    state.forget_syntax()
    state.registry.ids.clear()
    state.registry.nodes.clear()
    state.fn_modules.clear()
    state.saved_before.clear()
    state.grad_fns.refs.clear()
    state.module_calls.clear()
    state.bindings.clear()
    state.env.clear()
    interp.placement.fn_devices.clear()
    interp.library.watch.hooked.clear()
    state.calls.pending.clear()
    state.calls.copies.clear()
    interp.budget.verdicts.found.clear()


def _guarded(fn, interp: Interpreter) -> ProgramError | None:
    try:
        fn()
    except ProgramError as exc:
        return exc
    except (RecursionError, MemoryError) as exc:
        return interp.state.error(
            "limit", f"the program ran out of resources ({type(exc).__name__})"
        )
    except Exception as exc:  # a gap in gradviz, reported without a traceback
        return interp.state.error(
            "internal", f"gradviz could not run this line: {type(exc).__name__}: {exc}"
        )
    return None


def requested_backward(interp: Interpreter, options: RunOptions) -> None:
    name = options.backward
    env = interp.state.env
    value = env.get(name)
    if not isinstance(value, torch.Tensor):
        hint = did_you_mean(name, [k for k, v in env.items() if isinstance(v, torch.Tensor)])
        raise ProgramError(
            "name", f"there is no tensor named `{name}` to run backward on", None, None, hint
        )
    node = None
    for b in reversed(interp.state.bindings):
        if b.name == name:
            node = ast.Name(id=name, lineno=b.line, col_offset=0)
            break
    args: tuple = ()
    if options.backward_ones and value.numel() != 1:
        args = (torch.ones_like(value),)
    interp.library.backward(value, args, {}, node, origin="request", target=name)
    if args:
        interp.state.backward[-1].gradient = "ones"
