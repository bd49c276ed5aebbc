"""A program's tensor hooks: `x.register_hook(lambda g: print(g))`, `y.register_hook(double)`.

torch never gets the program's function. It gets a Python closure (`TensorHooks.hook_for`)
that calls the function through the interpreter (gradviz.program.interpreter.expressions'
call_value), under the run's caps: every step of the hook counts against the run's steps
and clock, every tensor it makes against the budget. The closure runs only while a backward
pass the program started is running (RunState.in_backward); the hook may not start another
(gradviz.program.runtime.torch_calls.Library.not_in_a_hook) nor register hooks, and must not
change the gradient it is given in place (refused by its version, and its `.data` is not
read; it is the hook's own copy, so a change through an alias torch cannot see reaches
nothing): it returns None or a new tensor of the gradient's shape, which replaces the
gradient, as in PyTorch. What it prints is the run's printed text.
A run registers at most MAX_HOOKS hooks. Re-runs for the gradient check
(RunState.skip_backward) register none.
"""

from __future__ import annotations

import torch

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.errors import runtime_error
from gradviz.program.runtime.functions import UserFunction
from gradviz.program.runtime.values import Builtin, FunctionRef, ProgramObject, type_name

MAX_HOOKS = 1_000  # tensor hooks one run may register
HANDLE_ADDRESS = 0x7F1000000000  # a handle prints with this, 0x40 higher for each next one


class HookHandle(ProgramObject):
    """What register_hook returns: `h.remove()` takes the hook off its tensor."""

    def __init__(self, state: RunState, handle):
        super().__init__(state)
        self.handle = handle
        self.number = state.hooks_made  # its address when printed: the same on every run

    def describe(self) -> str:
        return "RemovableHandle"

    def method(self, name: str, args: tuple, kwargs: dict, node):
        if name != "remove":
            raise self.refuse(f"has no method `.{name}` (only .remove())", node)
        if args or kwargs:
            raise self.state.error("type", "remove() takes no arguments", node)
        self.handle.remove()
        return None

    def __repr__(self) -> str:
        address = HANDLE_ADDRESS + 0x40 * self.number
        return f"<torch.utils.hooks.RemovableHandle object at {address:#x}>"


class TensorHooks:
    """Registers a program's functions as tensor hooks, each wrapped to run in the interpreter."""

    def __init__(self, state: RunState, quotas: Quotas, call_value):
        self.state = state
        self.quotas = quotas
        self.call_value = call_value  # (callee, args, kwargs, node) -> the call's value
        self.given: set[int] = set()  # id() of the gradients hooks running now were given

    def gives(self, tensor: torch.Tensor) -> bool:
        """Whether `tensor` is the gradient a running hook was given (its `.data` is
        refused: writes through it would leave no version to check)."""
        return id(tensor) in self.given

    def register(self, tensor: torch.Tensor, args: tuple, kwargs: dict, node) -> HookHandle:
        state = self.state
        if kwargs or len(args) != 1:
            raise state.error("type", "register_hook takes one function: t.register_hook(f)", node)
        fn = args[0]
        if not isinstance(fn, UserFunction | Builtin | FunctionRef):
            raise state.error(
                "type",
                f"register_hook takes a function (a def or a lambda), not a {type_name(fn)}",
                node,
            )
        if state.in_backward:
            raise state.error("forbidden", "a hook cannot register hooks", node)
        if state.hooks_made >= MAX_HOOKS:
            raise state.error(
                "limit",
                f"the program registered more than {MAX_HOOKS:,} hooks",
                node,
                "Register a hook once, outside the loop, or remove() it when done.",
            )
        state.hooks_made += 1
        if state.skip_backward:  # the gradient check's re-runs: no backward of the program's
            return HookHandle(state, NoHandle())
        try:
            handle = tensor.register_hook(self.hook_for(fn, tensor, node))
        except RuntimeError as exc:  # a tensor that does not require grad, as torch says
            raise runtime_error(state, exc, node, ".register_hook()", (tensor,)) from None
        return HookHandle(state, handle)

    def hook_for(self, fn, tensor: torch.Tensor, node):
        """The closure torch calls with each gradient: the program's `fn`, run by the
        interpreter, and its answer checked."""
        state = self.state

        def hook(grad: torch.Tensor):
            if not state.in_backward:  # a backward that is not the program's own
                raise state.error("forbidden", "a hook ran outside the program's run", node)
            where = state.node
            with torch.no_grad():  # the hook's own copy: nothing it does reaches autograd's
                given = grad.clone()
            if state.shadow is not None:  # simulated CUDA: a gradient lives on its tensor's device
                state.shadow.place(given, state.shadow.device_of(tensor))
            version = given._version
            self.given.add(id(given))
            try:
                result = self.call_value(fn, (given,), {}, node)
            finally:
                state.node = where
                self.given.discard(id(given))
            if given._version != version:
                raise state.error(
                    "type",
                    "the hook registered here changed its gradient in place; a hook must not "
                    "change what it is given",
                    node,
                    "Return a new tensor instead, e.g. lambda g: g * 2.",
                )
            if result is None:
                return None
            if not isinstance(result, torch.Tensor):
                raise state.error(
                    "type",
                    f"the hook registered here returned a {type_name(result)}: a hook returns "
                    "a tensor of its gradient's shape, or None",
                    node,
                )
            if result.shape != grad.shape:
                raise state.error(
                    "runtime",
                    f"the hook registered here returned a tensor of shape {tuple(result.shape)}"
                    f" for a gradient of shape {tuple(grad.shape)}: it must keep the shape",
                    node,
                )
            return result

        return hook


class NoHandle:
    def remove(self) -> None:
        pass
