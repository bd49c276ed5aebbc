"""Optimizers and learning-rate schedulers a program makes (gradviz.program.allowlists.nntables:
OPTIMIZERS, SCHEDULERS).

An optimizer's state (SGD's momentum, Adam's two moving averages, RMSprop's and Adagrad's
squared-gradient averages) is counted against the
run's bytes in all when the optimizer is made, before any of it exists
(gradviz.program.budgets.precheck.Budget.reserve). `opt.step()` counts the values it reads, runs
PyTorch's own step, and records each parameter it changed, before and after
(gradviz.program.results.reports.ParameterUpdate, shown with the run's result).
"""

from __future__ import annotations

import torch
from torch import optim

from gradviz.graph.values import tensor_values
from gradviz.program.allowlists import nntables
from gradviz.program.objects.arguments import TensorIterator, check_plain, given_arguments
from gradviz.program.objects.layers import LayerRef
from gradviz.program.objects.lazy import unsized
from gradviz.program.results.reports import ParameterUpdate
from gradviz.program.runtime.errors import runtime_error
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import ProgramObject, type_name

MAX_UPDATES = 200  # parameter changes a run records (each step, each parameter)


def state_copies(spec: nntables.ObjectSpec, given: dict) -> int:
    """How many copies of its parameters an optimizer keeps as state."""
    if spec.target is optim.SGD:
        return 1 if given.get("momentum", 0) else 0
    if spec.target is optim.RMSprop:  # square_avg, momentum_buffer, grad_avg
        return 1 + bool(given.get("momentum", 0)) + bool(given.get("centered"))
    if spec.target is optim.Adagrad:
        return 1  # sum
    return 3 if given.get("amsgrad") else 2  # Adam, AdamW: exp_avg, exp_avg_sq (max_exp_avg_sq)


class Optimizers:
    """The optimizers and schedulers of one run."""

    def __init__(self, library: Library):
        self.library = library
        self.state = library.state
        self.budget = library.budget

    def make(self, label: str, spec: nntables.ObjectSpec, args, kwargs, node) -> ProgramObject:
        given = given_arguments(self.state, label, spec, args, kwargs, node)
        if spec.kind == "scheduler":
            return self.scheduler(label, spec, given, node)
        if "params" not in given:
            raise self.state.error(
                "type", f"{label} needs the parameters to optimise: {label}(net.parameters())", node
            )
        params = self.parameters(label, given.pop("params"), node)
        if any(unsized(p) for p in params):
            raise self.state.error(
                "type",
                f"{label} is given a lazy layer's parameters before they exist: a lazy layer "
                "(nn.LazyLinear, nn.LazyConv2d) makes them at its first call",
                node,
                "Call the model once first (a dry run, e.g. net(x)), then make the optimizer.",
            )
        check_plain(self.state, label, given, (), node)
        what = self.state.segment(node, 50) or label
        nbytes = state_copies(spec, given) * sum(p.nbytes for p in params)
        self.budget.reserve(what, nbytes + 8 * len(params), node)
        try:
            made = spec.target(params, **given)
        except Exception as exc:
            raise runtime_error(self.state, exc, node, label) from None
        return OptimizerRef(self, made)

    def parameters(self, label: str, given, node) -> list[torch.Tensor]:
        if isinstance(given, LayerRef):
            raise self.state.error(
                "type", f"{label} takes the layer's parameters: {label}(net.parameters())", node
            )
        if isinstance(given, TensorIterator):
            items = given.rest()
        elif isinstance(given, list | tuple):
            items = list(given)
        else:
            raise self.state.error(
                "type",
                f"{label} takes an iterable of tensors (net.parameters() or [w, b]), "
                f"not a {type_name(given)}",
                node,
            )
        params = [p[1] if isinstance(p, tuple) and len(p) == 2 else p for p in items]
        for p in params:
            if not isinstance(p, torch.Tensor):
                raise self.state.error(
                    "type", f"{label} optimises tensors, not a {type_name(p)}", node
                )
        return params

    def scheduler(self, label: str, spec, given: dict, node) -> ProgramObject:
        opt = given.pop("optimizer", None)
        if not isinstance(opt, OptimizerRef):
            raise self.state.error(
                "type", f"{label} takes an optimizer first: {label}(opt, ...)", node
            )
        check_plain(self.state, label, given, (), node)
        try:
            made = spec.target(opt.optimizer, **given)
        except Exception as exc:
            raise runtime_error(self.state, exc, node, label) from None
        return SchedulerRef(self.state, made)


class OptimizerRef(ProgramObject):
    """An optimizer as a program holds it: `.step()` and `.zero_grad()`."""

    torch_type = optim.Optimizer

    def __init__(self, optimizers: Optimizers, optimizer: optim.Optimizer):
        super().__init__(optimizers.state)
        self.optimizers = optimizers
        self.optimizer = optimizer

    def describe(self) -> str:
        return f"torch.optim.{type(self.optimizer).__name__} optimizer"

    def __repr__(self) -> str:
        return repr(self.optimizer)

    def params(self) -> list[torch.Tensor]:
        return [p for group in self.optimizer.param_groups for p in group["params"]]

    def method(self, name: str, args: tuple, kwargs: dict, node):
        if name == "zero_grad":
            if args or set(kwargs) - {"set_to_none"}:
                raise self.refuse("method zero_grad() takes set_to_none= only", node)
            self.optimizer.zero_grad(set_to_none=bool(kwargs.get("set_to_none", True)))
            return None
        if name == "step":
            if args or kwargs:
                raise self.refuse("method step() takes no arguments (no closure)", node)
            return self.step(node)
        return super().method(name, args, kwargs, node)

    def step(self, node) -> None:
        state, budget = self.state, self.optimizers.budget
        params = [p for p in self.params() if p.grad is not None]
        budget.ops += 1
        budget.count_work(tuple(params) + tuple(p.grad for p in params), node)
        room = MAX_UPDATES - len(state.updates)
        watched = params[: max(0, room)]
        before = [tensor_values(p, keep=False)[1] for p in watched]
        summaries = state.calls.before_step(params)
        try:
            self.optimizer.step()
        except Exception as exc:
            raise runtime_error(state, exc, node, "step()") from None
        owner = state.segment(getattr(getattr(node, "func", None), "value", node), 30)
        line = getattr(node, "lineno", 0)
        label = f"{owner} ({type(self.optimizer).__name__})"
        state.calls.after_step(params, summaries, label, line)
        for i, p in enumerate(watched):
            state.updates.append(
                ParameterUpdate(
                    line=line,
                    optimizer=f"{owner} ({type(self.optimizer).__name__})",
                    name=state.name_of(p) or f"parameter {i + 1}",
                    before=before[i],
                    after=tensor_values(p, keep=False)[1],
                )
            )
        return None


class SchedulerRef(ProgramObject):
    """A learning-rate scheduler: `.step()` and `.get_last_lr()`."""

    def __init__(self, state, scheduler):
        super().__init__(state)
        self.scheduler = scheduler

    def describe(self) -> str:
        return f"{type(self.scheduler).__name__} scheduler"

    def method(self, name: str, args: tuple, kwargs: dict, node):
        if name not in nntables.SCHEDULER_METHODS:
            return super().method(name, args, kwargs, node)
        if args or kwargs:
            raise self.refuse(f"method {name}() takes no arguments", node)
        if name == "get_last_lr":
            return [float(v) for v in self.scheduler.get_last_lr()]
        try:
            self.scheduler.step()
        except Exception as exc:
            raise runtime_error(self.state, exc, node, "step()") from None
        return None
