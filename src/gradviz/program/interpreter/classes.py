"""A program's own torch.nn modules: `class Net(nn.Module)` with its methods.

The checker (gradviz.program.syntax.class_rules.ClassRules) has allowed only top-level classes with
one base, nn.Module, and methods (`__init__` and public names). A class is a `UserClass`:
its name and its methods as the program's own functions (gradviz.program.runtime.functions
.UserFunction), nothing of Python's class machinery. Calling it makes a `UserModule`: a
plain `nn.Module()` made here (no code of the program's inside it) into which gradviz
registers the layers the program sets on `self` (`self.fc1 = nn.Linear(...)`), so
`.parameters()`, `.named_parameters()`, `.to(device)`, optimizers, `zero_grad`,
`state_dict` and `train()/eval()` are PyTorch's own on real registered parameters, and
the graph names them by path (`net.fc1.weight`); an `nn.Parameter` set on `self`
(`self.w = nn.Parameter(torch.randn(3))`) is registered the same way (`net.w`). A tensor
given to `self.register_buffer('tril', t)` is registered as a buffer (moved by `.to`, kept
in `state_dict()`). Other
values set on `self` (tensors,
numbers, lists) are kept beside it, as PyTorch keeps plain attributes.

Calling the instance runs its `forward` through the interpreter (never through
`nn.Module.__call__`), with the call depth counted as any function's, recorded as one
module call (a cluster on the graph named by the class and the path) that holds the calls
of the layers inside it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

import torch
from torch import nn

from gradviz.graph.model import ModuleCall
from gradviz.program.allowlists import nntables
from gradviz.program.interpreter.plain_classes import method_kind
from gradviz.program.objects.forward import name_nodes
from gradviz.program.objects.layers import MAX_DEPTH, LayerRef, Layers
from gradviz.program.runtime.functions import Functions, UserFunction
from gradviz.program.runtime.values import ProgramObject, held, type_name
from gradviz.program.syntax.program_error import ProgramError, did_you_mean


class UserClass(ProgramObject):
    """`class Net(nn.Module): ...` as a program holds it: call it to make a module."""

    def __init__(self, classes: Classes, name: str, methods: dict[str, UserFunction]):
        super().__init__(classes.state)
        self.classes = classes
        self.name = name
        self.methods = methods
        self.kinds: dict[str, str] = {}  # method -> "staticmethod", "classmethod", "property"

    def describe(self) -> str:
        return f"class {self.name}"

    def covers(self, value) -> bool:
        return isinstance(value, UserModule) and value.cls is self

    def method(self, name: str, args: tuple, kwargs: dict, node):
        """Net.make(...) for a @staticmethod or @classmethod."""
        kind = self.kinds.get(name)
        if kind not in ("staticmethod", "classmethod"):
            return super().method(name, args, kwargs, node)
        args = (self, *args) if kind == "classmethod" else args
        return self.classes.functions.call(self.methods[name], args, kwargs, node)

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"

    def call(self, args: tuple, kwargs: dict, node):
        return self.classes.instantiate(self, args, kwargs, node)


class UserModule(LayerRef):
    """An instance of a program's class: a real nn.Module holding the program's layers, and
    the program's methods to run on it."""

    def __init__(self, classes: Classes, cls: UserClass):
        super().__init__(classes.layers, nn.Module())
        # its name in nn.Module's repr, as PyTorch prints a module of that class, also
        # inside another module's: `(n): N(...)` (a plain callable, no code of the program's)
        self.module.__dict__["_get_name"] = functools.partial(str, cls.name)
        self.classes = classes
        self.cls = cls
        self.attrs: dict[str, object] = {}  # plain attributes: tensors, numbers, lists
        self.ready = False  # super().__init__() was called

    def describe(self) -> str:
        return f"{self.cls.name} module"

    def __repr__(self) -> str:
        return repr(self.module)

    def call(self, args: tuple, kwargs: dict, node):
        return self.classes.forward(self, args, kwargs, node)

    def child(self, name: str) -> LayerRef | None:
        module = dict(self.module.named_children()).get(name)
        if module is None:
            return None
        return self.layers.ref(module, None if self.path is None else f"{self.path}.{name}")

    def attribute(self, name: str, node):
        if name in self.attrs:
            return self.attrs[name]
        child = self.child(name)
        if child is not None:
            return child
        if name in self.cls.methods:
            if self.cls.kinds.get(name) == "property":
                return self.classes.functions.call(self.cls.methods[name], (self,), {}, node)
            if self.cls.kinds.get(name) == "method":  # self.apply(self._init_weights)
                return BoundMethod(self, name)
            raise self.state.error(
                "type", f"`.{name}` is a method: call it, e.g. self.{name}(...)", node
            )
        if name == "training":
            return self.module.training
        parameter = self.own_parameters().get(name)
        if parameter is None and name in self.module._buffers:  # self.register_buffer(...)
            parameter = self.module._buffers[name]
            if parameter is None:
                return None
        if parameter is not None:  # self.w = nn.Parameter(...): registered, read back
            return self.layers.overrides.get(id(parameter), parameter)
        known = [
            *self.attrs,
            *dict(self.module.named_children()),
            *self.own_parameters(),
            *self.cls.methods,
        ]
        raise self.state.error(
            "name",
            f"'{self.cls.name}' object has no attribute '{name}'",
            node,
            did_you_mean(name, known + list(nntables.MODULE_METHODS)),
        )

    def own_parameters(self) -> dict:
        """The parameters the program set on this module itself (nn.Parameter)."""
        return dict(self.module.named_parameters(recurse=False))

    def iterate(self, node) -> ProgramObject:
        """iter(net) of a class with `__iter__` (a generator, `yield` in it)."""
        if "__iter__" not in self.cls.methods:
            return super().iterate(node)
        it = self.classes.call_method(self, "__iter__", (), {}, node)
        if not isinstance(it, ProgramObject) or isinstance(it, UserModule | UserClass):
            raise self.state.error(
                "type", f"iter() returned non-iterator of type '{type_name(it)}'", node
            )
        return it.iterate(node)

    def method(self, name: str, args: tuple, kwargs: dict, node):
        if name in self.cls.methods:
            return self.classes.call_method(self, name, args, kwargs, node)
        if name == "register_buffer":
            return self.classes.register_buffer(self, args, kwargs, node)
        child = self.child(name)
        if child is not None:  # self.fc1(x)
            return child.call(args, kwargs, node)
        if name in self.attrs:  # self.act(x), a function the program kept
            return self.classes.call_value(self.attrs[name], args, kwargs, node)
        return super().method(name, args, kwargs, node)


class BoundMethod(ProgramObject):
    """A module's method read but not called (`self._init_weights`): called later with its
    module first, as `self.apply(self._init_weights)` calls it for each layer."""

    def __init__(self, made: UserModule, name: str):
        super().__init__(made.state)
        self.made = made
        self.name = name

    def describe(self) -> str:
        return "method"

    def __repr__(self) -> str:
        return f"<bound method {self.made.cls.name}.{self.name} of {self.made!r}>"

    def call(self, args: tuple, kwargs: dict, node):
        return self.made.classes.call_method(self.made, self.name, args, kwargs, node)


class Classes:
    """The program's classes and their instances in one run."""

    def __init__(self, layers: Layers, functions: Functions, call_value: Callable):
        self.layers = layers
        self.state = layers.state
        self.functions = functions
        self.call_value = call_value
        self.building: list[UserModule] = []  # the instances whose __init__ is running

    def define(self, node: ast.ClassDef) -> UserClass:
        methods: dict[str, UserFunction] = {}
        for stmt in node.body:
            if not isinstance(stmt, ast.FunctionDef):
                continue
            if stmt.name not in ("__init__", "forward") and hasattr(nn.Module, stmt.name):
                raise self.state.error(
                    "forbidden",
                    f"a method named `{stmt.name}` would replace nn.Module's own "
                    f"`.{stmt.name}`; pick another name",
                    stmt,
                )
            methods[stmt.name] = self.functions.define(stmt)
        made = UserClass(self, node.name, methods)
        made.kinds = {n.name: method_kind(n) for n in node.body if isinstance(n, ast.FunctionDef)}
        return made

    def instantiate(self, cls: UserClass, args: tuple, kwargs: dict, node) -> UserModule:
        made = UserModule(self, cls)
        self.layers.refs[id(made.module)] = made
        init = cls.methods.get("__init__")
        if init is None:
            if args or kwargs:
                raise self.state.error("type", f"{cls.name}() takes no arguments", node)
            made.ready = True
            return made
        self.building.append(made)
        try:
            result = self.functions.call(init, (made, *args), kwargs, node)
        finally:
            self.building.pop()
        if result is not None:
            raise self.state.error(
                "type", f"__init__() should return None, not '{type_name(result)}'", node
            )
        if not made.ready:
            raise self.state.error(
                "type",
                f"`{cls.name}.__init__` does not call `super().__init__()`: PyTorch needs it "
                "before the module is used",
                init.node,
                "Make `super().__init__()` the first line of `__init__`.",
            )
        return made

    def super_init(self, stmt: ast.stmt) -> None:
        if not self.building or self.state.scope.owner != "__init__":
            raise self.state.error(
                "type", "`super().__init__()` runs only in a class's `__init__`", stmt
            )
        made = self.building[-1]
        if made.ready:
            raise self.state.error(
                "type", f"`super().__init__()` is called twice for {made.cls.name}", stmt
            )
        made.ready = True

    def call_method(self, made: UserModule, name: str, args: tuple, kwargs: dict, node):
        if name == "__init__":
            raise self.state.error("type", "`__init__` runs when the class is called", node)
        if name == "forward":
            return self.forward(made, args, kwargs, node)
        kind = made.cls.kinds.get(name)
        if kind == "property":
            raise self.state.error("type", f"`.{name}` is a property: read it, self.{name}", node)
        first = () if kind == "staticmethod" else (made.cls if kind == "classmethod" else made,)
        return self.functions.call(made.cls.methods[name], (*first, *args), kwargs, node)

    def forward(self, made: UserModule, args: tuple, kwargs: dict, node):
        """net(x): the class's forward, run by the interpreter, as one module call."""
        state, name = self.state, made.cls.name
        fn = made.cls.methods.get("forward")
        if fn is None:
            raise state.error(
                "type", f'Module [{name}] is missing the required "forward" function', node
            )
        line = getattr(node, "lineno", None)
        quiet = (
            state.quiet
        )  # a pass no result shows (gradviz.program.recording.quiet_passes): no call noted
        opened = state.open_calls
        if not quiet:
            path = made.path or state.segment(getattr(node, "func", node), 30) or name
            call = ModuleCall(
                f"m{len(state.module_calls)}", path, name, line, opened[-1] if opened else None
            )
            state.module_calls.append(call)
            opened.append(call.id)
        try:
            out = self.functions.call(fn, (made, *args), kwargs, node)
        except ProgramError as err:
            if line is not None and err.line != line and f"{name}.forward" not in (err.hint or ""):
                called = f"In {name}.forward, called at line {line}."
                err.hint = f"{err.hint} {called}" if err.hint else called
            raise
        finally:
            if not quiet:
                opened.pop()
        if not quiet:
            name_nodes(state, call.id, (args, kwargs), out, made.module)
        return out

    def register_buffer(self, made: UserModule, args: tuple, kwargs: dict, node) -> None:
        """self.register_buffer('tril', tensor): a tensor the module holds, moved with it by
        .to(device) and kept in its state_dict (unless persistent=False), not a parameter."""
        state = self.state
        given = dict(zip(("name", "tensor", "persistent"), args, strict=False))
        if (
            len(args) > 3
            or set(kwargs) & set(given)
            or set(kwargs) - {"name", "tensor", "persistent"}
        ):
            raise state.error(
                "type", "register_buffer(name, tensor, persistent=True) takes those three", node
            )
        given |= kwargs
        name, tensor = given.get("name"), given.get("tensor")
        persistent = given.get("persistent", True)
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise state.error(
                "type", "a buffer's name is a public identifier, such as 'tril'", node
            )
        if not isinstance(tensor, torch.Tensor | type(None)) or not isinstance(persistent, bool):
            raise state.error(
                "type", "register_buffer takes a name, a tensor (or None) and True or False", node
            )
        if not made.ready:
            raise state.error("type", "cannot assign buffer before Module.__init__() call", node)
        taken = name in made.attrs or made.child(name) is not None
        if (
            taken
            or name in made.own_parameters()
            or name in made.cls.methods
            or hasattr(nn.Module, name)
        ):
            raise state.error("type", f"attribute '{name}' already exists", node)
        try:
            made.module.register_buffer(name, tensor, persistent=persistent)
        except KeyError as exc:  # "attribute 'training' already exists", as PyTorch says it
            raise state.error("runtime", f"KeyError: {exc}", node) from None

    def set_attribute(self, made: UserModule, name: str, value, node) -> None:
        """self.name = value: a layer is registered as a submodule, the rest kept plain."""
        state = self.state
        if name.startswith("_") and (hasattr(nn.Module, name) or name in vars(made.module)):
            raise state.error(
                "forbidden",
                f"`{name}` is a name of nn.Module's internals, not part of this language; "
                "pick another name for the attribute",
                node,
            )
        if name in made.cls.methods or hasattr(nn.Module, name):
            raise state.error(
                "type",
                f"`{name}` is a method of {made.cls.name} or nn.Module; pick another name for "
                "the attribute",
                node,
            )
        if isinstance(value, LayerRef):
            self.set_layer(made, name, value, node)
            return
        if isinstance(value, nn.Parameter):
            self.set_parameter(made, name, value, node)
            return
        if name in made.own_parameters() and value is not None:
            raise state.error(
                "type",
                f"cannot assign '{type_name(value)}' as parameter '{name}' "
                "(torch.nn.Parameter or None expected)",
                node,
            )
        if name in made.module._buffers:
            if not isinstance(value, torch.Tensor | type(None)):
                raise state.error(
                    "type",
                    f"cannot assign '{type_name(value)}' as buffer '{name}' "
                    "(torch.Tensor or None expected)",
                    node,
                )
            setattr(made.module, name, value)  # the buffer replaced, as PyTorch replaces it
            return
        if made.child(name) is not None:
            raise state.error(
                "type",
                f"cannot assign '{type_name(value)}' as child module '{name}' "
                "(torch.nn.Module or None expected)",
                node,
            )
        made.attrs[name] = held(state, value, node, "a module's attribute")

    def set_parameter(self, made: UserModule, name: str, value, node) -> None:
        """self.w = nn.Parameter(...): registered as PyTorch registers it, so .parameters(),
        optimizers and .to(device) see it and the graph names it by path (net.w)."""
        if not made.ready:
            raise self.state.error(
                "type",
                "AttributeError: cannot assign parameters before Module.__init__() call",
                node,
                "Call `super().__init__()` first in `__init__`.",
            )
        if made.child(name) is not None:
            raise self.state.error(
                "type", f"attribute '{name}' already holds a layer; pick another name", node
            )
        made.attrs.pop(name, None)
        made.module.register_parameter(name, value)
        self.layers.check_model(made.cls.name, made.module, node)

    def set_layer(self, made: UserModule, name: str, value: LayerRef, node) -> None:
        state = self.state
        if not made.ready:
            raise state.error(
                "type",
                "AttributeError: cannot assign module before Module.__init__() call",
                node,
                "Call `super().__init__()` first in `__init__`.",
            )
        if any(m is made.module for m in value.module.modules()):
            raise state.error("type", "a module cannot hold itself", node)
        depth = max(made.depth, 1 + value.depth)
        if depth > MAX_DEPTH:
            raise state.error(
                "limit", f"this nests modules {depth} deep; the limit is {MAX_DEPTH}", node
            )
        made.attrs.pop(name, None)
        setattr(made.module, name, value.module)
        made.depth = depth
        self.layers.check_model(made.cls.name, made.module, node)
