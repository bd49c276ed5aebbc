"""Expressions: what a program's right-hand sides evaluate to.

`Evaluator.eval` walks one checked expression (gradviz.program.syntax.checker has already
refused everything outside the language; anything unknown here is refused again):
constants, names (read through the scopes of the program's functions), lists, tuples and
dicts, arithmetic and comparisons, `and`/`or`, conditional expressions, indexing and
slices, attributes, f-strings, lambdas, comprehensions and calls. Every node is one step
against the run's cap (gradviz.program.budgets.language_caps). It never runs user text: operators on
tensors, indexing, attribute reads and calls go to gradviz.program.runtime.torch_calls.Library.call,
under the run's caps; operators on plain numbers run here, after the budget has checked the
result's size; lists, dicts and strings go to gradviz.program.runtime.containers and
gradviz.program.runtime.strings, built-ins to gradviz.program.runtime.builtins, the program's own functions
to gradviz.program.runtime.functions.
"""

from __future__ import annotations

import ast
from operator import attrgetter

import numpy as np
import torch

from gradviz.program.allowlists import tables
from gradviz.program.allowlists.nntables import ObjectSpec
from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.budgets.precheck import Budget
from gradviz.program.interpreter.displays import Displays
from gradviz.program.interpreter.indexing import Indexing
from gradviz.program.objects.functional import AutogradFunctional
from gradviz.program.objects.hooks import TensorHooks
from gradviz.program.objects.makers import Objects
from gradviz.program.recording import grad_fns
from gradviz.program.recording.grad_fns import GradFnRef
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.builtins import Builtins
from gradviz.program.runtime.comprehensions import Comprehensions
from gradviz.program.runtime.containers import Containers, append
from gradviz.program.runtime.functions import Functions, Unpacking, UserFunction
from gradviz.program.runtime.generators import ProgramGenerator
from gradviz.program.runtime.iteration import Iteration
from gradviz.program.runtime.operators import Operators
from gradviz.program.runtime.pyrandom import call_plain
from gradviz.program.runtime.strings import Strings
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import (
    DATACLASS_FIELD,
    NAMESPACES,
    PARAMETER,
    Builtin,
    ClassRef,
    FunctionRef,
    Marker,
    Namespace,
    ProgramObject,
    TypeRef,
    checked,
    field_spec,
    marker_path,
    type_name,
)
from gradviz.program.syntax.grammar import FILE_ACCESS, UNAVAILABLE
from gradviz.program.syntax.program_error import ProgramError, did_you_mean

# The handler of each expression (a method of the Evaluator or of one of its parts; with gradviz.program.interpreter.statements.STATEMENTS, the
# language's index); a constant is read in `eval` itself.
EXPRESSIONS: dict[type[ast.expr], str] = {
    ast.Name: "lookup",
    ast.List: "displays.display",
    ast.Tuple: "displays.display",
    ast.Dict: "displays.dict_display",
    ast.Set: "set_display",
    ast.BinOp: "binary",
    ast.UnaryOp: "unary",
    ast.BoolOp: "bool_op",
    ast.IfExp: "if_expression",
    ast.Compare: "compare",
    ast.Subscript: "indexing.subscript",
    ast.Attribute: "attribute",
    ast.Call: "call_node",
    ast.Slice: "indexing.eval_index",
    ast.ListComp: "comprehensions.run",
    ast.GeneratorExp: "comprehensions.run",
    ast.SetComp: "comprehensions.run",
    ast.DictComp: "comprehensions.run",
    ast.JoinedStr: "fstring",
    ast.Lambda: "lambda_",
}


TORCH_OWNERS = (torch.Tensor, Namespace)  # whose methods torch runs
# The exact types of the arguments a function of Python's `random` takes the short way with
PLAIN_ARGUMENTS = frozenset({int, float, bool, str, type(None), list, tuple, range})


def unknown_name(state: RunState, name: str, node: ast.AST, builtins: dict) -> ProgramError:
    """The error for a name the program never bound: files named as the reason where it
    asks for one (`open`), else "did you mean" from the names it could have meant."""
    if name in FILE_ACCESS:
        return state.error("name", FILE_ACCESS[name], node)
    known = list(NAMESPACES) + list(builtins) + ["True", "False", "None"]
    scope = state.scope
    while scope is not None:
        known.extend(scope.names)
        scope = scope.parent
    if name in tables.all_known_names():
        hint = f"Did you mean `torch.{name}`?"
    else:
        hint = did_you_mean(name, known)
    return state.error("name", f"`{name}` is not defined", node, hint)


class Evaluator:
    """Evaluates a program's expressions against the run's variables."""

    def __init__(self, state: RunState, budget: Budget, quotas: Quotas, library: Library):
        self.state = state
        self.budget = budget
        self.quotas = quotas
        self.library = library
        self.objects = Objects(library)  # layers, optimizers, data (nn, optim, utils.data)
        self.iteration = Iteration(state, library)
        self.strings = Strings(state, quotas)
        self.containers = Containers(state, quotas, budget, self.iteration, self.call_value)
        self.operators = Operators(
            state, budget, library, self.iteration, self.strings, self.containers
        )
        self.builtins = Builtins(
            state,
            budget,
            quotas,
            library,
            self.iteration,
            self.strings,
            self.containers,
            self.call_value,
            lambda a, b, node: self.operators.binop(ast.Add(), a, b, node),
        )
        self.comprehensions = Comprehensions(
            state, quotas, self.iteration, self.containers, self.eval
        )
        self.unpacking = Unpacking(state, quotas, self.iteration, self.eval)
        self.displays = Displays(state, quotas, self.containers, self.unpacking, self.eval)
        self.indexing = Indexing(state, quotas, library, self.containers, self.unpacking, self.eval)
        self.functions: Functions | None = None  # set by the interpreter, which runs bodies
        # id() of each `super()` of a `super().name(...)` in a class's method -> (the class,
        # the method's first parameter); run by super_method (both set by the class statement)
        self.super_owners: dict[int, tuple[object, str]] = {}
        self.super_method = None
        self.spread_calls: dict[int, bool] = {}  # id() of a call run so far -> any `*x` in it
        library.hooks = TensorHooks(state, quotas, self.call_value)  # t.register_hook(f)
        library.functional = AutogradFunctional(state, budget, library, self.call_value)
        self.objects.layers.call_value = self.call_value
        self.dispatch = {kind: attrgetter(name)(self) for kind, name in EXPRESSIONS.items()}

    def eval(self, node: ast.AST):
        self.state.node = node
        quotas = self.quotas  # one step (Quotas.step, inline: this is the hottest path)
        quotas.steps += 1
        if quotas.steps > quotas.max_steps:
            raise quotas.too_many_steps(node)
        kind = type(node)
        if kind is ast.Constant:
            return node.value
        if kind is ast.Name:  # the next commonest: `lookup`'s first case here, else it
            scope = self.state.scope
            if not scope.outer:
                names = scope.names
                if node.id in names:
                    return names[node.id]
            return self.lookup(node)
        handler = self.dispatch.get(kind)
        if handler is None:
            raise self.state.error(
                "forbidden", f"`{kind.__name__}` is not part of this language", node
            )
        return handler(node)

    def set_display(self, node: ast.Set):
        return self.containers.new_set(self.unpacking.items(node.elts, "set"), node)

    def unary(self, node: ast.UnaryOp):
        return self.operators.unary(node.op, self.eval(node.operand), node)

    def fstring(self, node: ast.JoinedStr):
        return self.strings.fstring(node, self.eval)

    def lambda_(self, node: ast.Lambda):
        return self.functions.define(node)

    def binary(self, node: ast.BinOp):
        left = self.eval(node.left)
        return self.operators.binop(node.op, left, self.eval(node.right), node)

    def bool_op(self, node: ast.BoolOp):
        """`a and b`, `a or b`: the deciding operand, as Python gives it."""
        last = len(node.values) - 1
        for i, operand in enumerate(node.values):
            value = self.eval(operand)
            if i == last:
                return value
            truth = self.iteration.truth(value, operand)
            if truth != isinstance(node.op, ast.And):
                return value
        return None  # not reached: a BoolOp has two operands or more

    def if_expression(self, node: ast.IfExp):
        test = self.iteration.truth(self.eval(node.test), node.test)
        return self.eval(node.body if test else node.orelse)

    def compare(self, node: ast.Compare):
        """`a < b`, chains `a < b < c` (each operand evaluated once, stopping at the first
        false link), `in`, `is`."""
        left = self.eval(node.left)
        result = True
        for i, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = self.eval(right_node)
            result = self.operators.compare(op, left, right, node)
            if i < len(node.ops) - 1 and not self.iteration.truth(result, node):
                return result
            left = right
        return result

    def lookup(self, node: ast.Name):
        name = node.id
        scope, builtins = self.state.scope, self.builtins.table
        while scope is not None:
            if scope.outer:  # declared global or nonlocal: read where it lives
                scope = scope.outer.get(name, scope)
            if name in scope.names:
                return scope.names[name]
            if name in scope.local:
                raise self.state.error(
                    "name",
                    f"`{name}` is used in `{scope.owner}` before it is assigned: a name the "
                    "function assigns anywhere is its own from the start, as in Python",
                    node,
                    "Pass the value in as an argument, or assign it first.",
                )
            scope = scope.parent
        if name in NAMESPACES:
            return NAMESPACES[name]
        if name in builtins:
            return builtins[name]
        raise unknown_name(self.state, name, node, builtins)

    def attribute(self, node: ast.Attribute):
        obj = self.eval(node.value)
        name = node.attr
        if isinstance(obj, Namespace):
            return namespace_member(self.state, obj, name, node)
        if isinstance(obj, torch.Tensor):
            return self.library.tensor_attribute(obj, name, node)
        if isinstance(obj, np.generic):  # a numpy scalar: x.dtype
            return self.library.arrays.members.scalar_attribute(obj, name, node)
        if isinstance(obj, ProgramObject):
            return obj.attribute(name, node)
        if isinstance(obj, GradFnRef):  # read-only views of an autograd node
            value = grad_fns.attribute(self.state, obj, name, node)
            if isinstance(value, tuple):
                self.quotas.items(len(value), node, "tuple")
            return checked(self.state, value, node, f".{name}")
        if isinstance(obj, torch.device) and name in ("type", "index"):
            return getattr(obj, name)
        if isinstance(obj, torch.dtype) and name in ("is_floating_point", "itemsize"):
            return getattr(obj, name)
        raise self.state.error(
            "type", f"a {type_name(obj)} has no attribute `.{name}` in this language", node
        )

    def call_node(self, node: ast.Call):
        spread = self.spread_calls.get(id(node))  # whether any argument is `*x`, per call
        if spread is None:
            spread = any(isinstance(a, ast.Starred) for a in node.args)
            self.spread_calls[id(node)] = spread
        if spread:
            args = tuple(self.unpacking.items(node.args, "list of arguments"))
        else:  # what Unpacking.items gives when no argument is `*x`, in the same order
            args = tuple(map(self.eval, node.args))
        kwargs = self.unpacking.keywords(node) if node.keywords else {}
        state = self.state
        state.node = node
        func = node.func
        if type(func) is ast.Attribute:  # a method: t.name(...), xs.append(x), torch.f(x)
            if id(func.value) in self.super_owners:
                return self.super_method(func.value, func.attr, args, kwargs, node)
            owner = self.eval(func.value)
            state.node = node
            kind = type(owner)
            if kind is list and func.attr == "append" and len(args) == 1 and not kwargs:
                return append(self.state, self.quotas, owner, args[0], node)  # xs.append(x)
            if kind is Namespace:  # torch.tanh(h), F.relu(x): the checks below, in short
                for value in (*args, *kwargs.values()) if kwargs else args:
                    self.containers.bounded(value, node, "an argument")
                member = owner.members.get(func.attr)
                if member is None:
                    raise missing_member(self.state, owner, func.attr, func)
                return self.call_named(f"{owner.path}.{func.attr}", member, args, kwargs, node)
            if isinstance(owner, TORCH_OWNERS):  # torch reads nested lists in C
                for value in (*args, *kwargs.values()):
                    self.containers.bounded(value, node, "an argument")
            if isinstance(owner, torch.Tensor):
                return self.library.tensor_method(owner, func.attr, args, kwargs, node)
            if isinstance(owner, str) and func.attr == "format":
                return self.strings.format_method(owner, args, kwargs, node)
            if isinstance(owner, list | dict | str | tuple | set):
                return self.containers.method(owner, func.attr, args, kwargs, node)
            if isinstance(owner, Namespace):
                member = owner.members.get(func.attr)
                if member is None:
                    raise missing_member(self.state, owner, func.attr, func)
                return self.call_named(f"{owner.path}.{func.attr}", member, args, kwargs, node)
            if isinstance(owner, ProgramObject):
                return owner.method(func.attr, args, kwargs, node)
            if isinstance(owner, np.generic):  # a numpy scalar: x.item()
                return self.library.arrays.members.scalar_method(
                    owner, func.attr, args, kwargs, node
                )
            if isinstance(owner, GradFnRef):
                return grad_fns.method(self.state, owner, func.attr, args, kwargs, node)
            raise self.library.none_grads.error(func.value, owner) or self.state.error(
                "type",
                f"a {type_name(owner)} has no method `.{func.attr}` in this language",
                func,
            )
        callee = self.eval(func)
        self.state.node = node
        return self.call_value(callee, args, kwargs, node)

    def call_value(self, callee, args: tuple, kwargs: dict, node):
        """Call a built-in, one of the program's own functions, or a torch function or class
        it kept (as if it were named here)."""
        if isinstance(callee, Builtin):
            return self.builtins.call(callee, args, kwargs, node)
        if isinstance(callee, FunctionRef):
            return self.call_named(callee.path, callee.member, args, kwargs, node)
        if isinstance(callee, UserFunction):
            return self.functions.call(callee, args, kwargs, node)
        if isinstance(callee, ProgramObject):
            return callee.call(args, kwargs, node)
        if isinstance(callee, ClassRef):  # from torch.utils.data import DataLoader
            return self.call_named(callee.path, callee.spec, args, kwargs, node)
        if callee is PARAMETER:  # from torch.nn import Parameter
            return self.library.call_member("torch.nn.Parameter", callee, args, kwargs, node)
        if callee is DATACLASS_FIELD:  # from dataclasses import field
            return field_spec(self.state, args, kwargs, node)
        if isinstance(callee, Marker | TypeRef):  # from torch import Tensor; jacobian
            path = marker_path(callee) if isinstance(callee, Marker) else callee.path
            return self.library.call_member(path, callee, args, kwargs, node)
        raise self.state.error("type", f"a {type_name(callee)} cannot be called", node)

    def call_named(self, path: str, member, args: tuple, kwargs: dict, node):
        """A member of torch's tables called by its path, named there or kept: a class makes
        an object (layers, optimizers, data), anything else is the library's call. A
        generator among the arguments is read into a list first (`nn.ModuleList(Block() for
        _ in range(n))`, `optim.SGD(p for p in net.parameters() if ...)`): torch never holds
        one of the program's generators."""
        values = (*args, *kwargs.values()) if kwargs else args
        if ProgramGenerator in map(type, values):
            args = tuple(self._listed(a, node) for a in args)
            kwargs = {k: self._listed(v, node) for k, v in kwargs.items()}
        if isinstance(member, ObjectSpec):
            return self.objects.make(path, member, args, kwargs, node)
        if isinstance(member, ProgramObject):  # numpy's functions
            return member.call(args, kwargs, node)
        if path.startswith("random.") and type(member) is tables.FnSpec and not member.random:
            if PLAIN_ARGUMENTS.issuperset(map(type, (*args, *kwargs.values()))):
                return call_plain(
                    self.state, self.budget, self.library, path, member, args, kwargs, node
                )
        return self.library.call_member(path, member, args, kwargs, node)

    def _listed(self, value, node):
        if not isinstance(value, ProgramGenerator):
            return value
        return self.unpacking.spread(value, node, 0, "list")


def namespace_member(state: RunState, space: Namespace, name: str, node: ast.AST):
    """`torch.zeros`, `nn.Linear`, `math.pi` read as values: a function or class of the
    tables as a FunctionRef, anything else as it is; a name the namespace lacks is refused
    with a suggestion."""
    if name in space.members:
        member = space.members[name]
        if isinstance(member, tables.FnSpec | ObjectSpec):
            return FunctionRef(f"{space.path}.{name}", member)
        if isinstance(member, Marker):
            raise state.error(
                "type",
                f"`{space.path}.{name}` is a function: call it, e.g. {space.path}.{name}(...)",
                node,
            )
        return member
    raise missing_member(state, space, name, node)


def missing_member(state: RunState, namespace: Namespace, name: str, node: ast.AST):
    """The error for `torch.name` (or any namespace's) where the language has no `name`."""
    path = f"{namespace.path}.{name}"
    if path in FILE_ACCESS:
        return state.error("name", FILE_ACCESS[path], node)
    if path in UNAVAILABLE:
        return state.error("forbidden", UNAVAILABLE[path], node)
    return state.error(
        "name",
        f"`{path}` is not available in this language",
        node,
        did_you_mean(name, namespace.members),
    )
