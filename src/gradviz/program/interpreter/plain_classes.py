"""A program's plain classes: `class Accumulator:`, `class Config(Base):`, `@dataclass`.

The checker (gradviz.program.syntax.class_rules.ClassRules) has allowed top-level classes
with one base or none, no keywords, a body of methods, class attributes (`EPS = 1e-5`) and,
in a `@dataclass`, annotated fields. Nothing of Python's class machinery is used: a class is
a `PlainClass` (its name, its base among the program's own classes, its methods as the
program's own functions, gradviz.program.runtime.functions.UserFunction, and its class
attributes in a dict) and an instance a `PlainInstance` (its class and a dict of its
attributes). No Python class, type() or metaclass is ever made from a program's text.

Python's operations reach an instance only through the dunder methods of
gradviz.program.syntax.grammar.DUNDER_METHODS, each run by the interpreter (under the call
depth, step and item caps) for its one operation: `len(x)`, `x[i]`, `iter(x)` and `for`,
`x(...)`, `repr(x)` and `print(x)`. A dunder name can never be read or written as an
attribute (the checker refuses every `__x__` attribute but the method a `super().__repr__()`
call names, gradviz.program.interpreter.class_statements). `@staticmethod`, `@classmethod` and
`@property` are read from the method's decorators (`Method.kind`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from gradviz.program.interpreter.control import exception_of
from gradviz.program.runtime.functions import Functions, UserFunction
from gradviz.program.runtime.values import FieldSpec, ProgramObject, held, type_name
from gradviz.program.syntax.program_error import ProgramError, did_you_mean

MAX_ATTRIBUTES = 256  # attributes of one instance, or of one class's body
MUTABLE = (list, dict, set)
MAX_SHOWN = 32  # dataclasses shown inside one another in one repr


@dataclass(frozen=True)
class Method:
    """One `def` of a class: "method", "staticmethod", "classmethod" or "property"."""

    fn: UserFunction
    kind: str = "method"


def method_kind(node: ast.FunctionDef) -> str:
    names = [d.id for d in node.decorator_list if isinstance(d, ast.Name)]
    for kind in ("staticmethod", "classmethod", "property"):
        if kind in names:
            return kind
    return "method"


class PlainClass(ProgramObject):
    """`class Accumulator:` as a program holds it: call it to make an instance."""

    def __init__(self, owner: PlainClasses, name: str, base: PlainClass | None):
        super().__init__(owner.state)
        self.owner = owner
        self.name = name
        self.base = base
        self.methods: dict[str, Method] = {}
        self.constants: dict[str, object] = {}
        self.fields: list[tuple[str, bool, object]] | None = None  # a dataclass's
        # torch.utils.data.Dataset for a class built on it, or on a class that is: what
        # isinstance() finds its instances are
        self.torch_base: type | None = None if base is None else base.torch_base

    def describe(self) -> str:
        return f"class {self.name}"

    def __repr__(self) -> str:
        return f"<class '__main__.{self.name}'>"

    def chain(self) -> list[PlainClass]:
        """This class and its bases, nearest first (Python's MRO for single inheritance)."""
        out, cls = [], self
        while cls is not None:
            out.append(cls)
            cls = cls.base
        return out

    def find(self, name: str):
        """The method or class attribute `name`, from this class or the nearest base."""
        for cls in self.chain():
            if name in cls.methods:
                return cls.methods[name]
            if name in cls.constants:
                return cls.constants[name]
        return None

    def known(self) -> list[str]:
        return [n for c in self.chain() for n in (*c.methods, *c.constants)]

    def equals(self, other) -> bool:
        return other is self

    def covers(self, value) -> bool:
        """isinstance(value, this class)."""
        return isinstance(value, PlainInstance) and self in value.cls.chain()

    def call(self, args: tuple, kwargs: dict, node):
        return self.owner.instantiate(self, args, kwargs, node)

    def attribute(self, name: str, node):
        found = self.find(name)
        if isinstance(found, Method):
            raise self.state.error(
                "type", f"`{self.name}.{name}` is a method: call it, {self.name}.{name}(...)", node
            )
        if found is None:
            raise self.state.error(
                "name",
                f"type object '{self.name}' has no attribute '{name}'",
                node,
                did_you_mean(name, self.known()),
            )
        return found

    def method(self, name: str, args: tuple, kwargs: dict, node):
        found = self.find(name)
        if not isinstance(found, Method):
            return self.owner.call_value(self.attribute(name, node), args, kwargs, node)
        if found.kind == "classmethod":
            args = (self, *args)
        elif found.kind == "property":
            raise self.state.error("type", "'property' object is not callable", node)
        return self.owner.functions.call(found.fn, args, kwargs, node)


class PlainInstance(ProgramObject):
    """An instance of a program's plain class: its class and its attributes."""

    map_style = True  # DataLoader(ds): read by len(ds) and ds[i], through the interpreter

    def __init__(self, cls: PlainClass):
        super().__init__(cls.state)
        self.cls = cls
        self.attrs: dict[str, object] = {}
        self.address: int | None = None  # RunState.made_up_address, when first shown

    @property
    def torch_type(self) -> type | None:  # isinstance(ds, torch.utils.data.Dataset)
        return self.cls.torch_base

    def describe(self) -> str:
        return f"{self.cls.name} object"

    def dunder(self, name: str, args: tuple, node, missing: str):
        """Run the class's `name` method (a dunder of DUNDER_METHODS) for one operation."""
        found = self.cls.find(name)
        if not isinstance(found, Method):
            raise self.state.error("type", f"'{self.cls.name}' object {missing}", node)
        return self.owner_call(found.fn, (self, *args), {}, node)

    def owner_call(self, fn: UserFunction, args: tuple, kwargs: dict, node):
        return self.cls.owner.functions.call(fn, args, kwargs, node)

    def attribute(self, name: str, node):
        if name in self.attrs:
            return self.attrs[name]
        found = self.cls.find(name)
        if isinstance(found, Method):
            if found.kind == "property":
                return self.owner_call(found.fn, (self,), {}, node)
            raise self.state.error(
                "type", f"`.{name}` is a method: call it, e.g. obj.{name}(...)", node
            )
        if found is not None:
            return found
        raise self.state.error(
            "name",
            f"'{self.cls.name}' object has no attribute '{name}'",
            node,
            did_you_mean(name, [*self.attrs, *self.cls.known()]),
        )

    def method(self, name: str, args: tuple, kwargs: dict, node):
        found = None if name in self.attrs else self.cls.find(name)
        if not isinstance(found, Method) or found.kind == "property":
            return self.cls.owner.call_value(self.attribute(name, node), args, kwargs, node)
        if found.kind == "classmethod":
            args = (self.cls, *args)
        elif found.kind == "method":
            args = (self, *args)
        return self.owner_call(found.fn, args, kwargs, node)

    def set(self, name: str, value, node) -> None:
        """obj.name = value (self.name = value in its methods)."""
        found = self.cls.find(name)
        if isinstance(found, Method):
            what = "a property" if found.kind == "property" else "a method"
            raise self.state.error(
                "type", f"`{name}` is {what} of {self.cls.name}; pick another attribute name", node
            )
        if name not in self.attrs:
            if len(self.attrs) >= MAX_ATTRIBUTES:
                raise self.state.error(
                    "limit",
                    f"an object may have at most {MAX_ATTRIBUTES} attributes in this language",
                    node,
                )
            self.cls.owner.quotas.items(len(self.attrs) + 1, node, "object's attributes", made=1)
        self.attrs[name] = held(self.state, value, node, "an object's attribute")

    def call(self, args: tuple, kwargs: dict, node):
        found = self.cls.find("__call__")
        if not isinstance(found, Method):
            raise self.state.error("type", f"'{self.cls.name}' object is not callable", node)
        return self.owner_call(found.fn, (self, *args), kwargs, node)

    def length(self, node) -> int:
        n = self.dunder("__len__", (), node, "has no len()")
        if isinstance(n, bool) or not isinstance(n, int):
            raise self.state.error(
                "type", f"'{type_name(n)}' object cannot be interpreted as an integer", node
            )
        if n < 0:
            raise self.state.error("runtime", "ValueError: __len__() should return >= 0", node)
        return n

    def equals(self, other) -> bool:
        """Identity, or for a dataclass its fields compared as Python's dataclass compares
        them (plain values by value; tensors and objects by identity here)."""
        if other is self:
            return True
        fields = next((c.fields for c in self.cls.chain() if c.fields is not None), None)
        if fields is None or not isinstance(other, PlainInstance) or other.cls is not self.cls:
            return False
        for name, _, _ in fields:
            a, b = self.attrs.get(name), other.attrs.get(name)
            plain = (bool, int, float, str, type(None))
            if not (a is b or (isinstance(a, plain) and isinstance(b, plain) and a == b)):
                return False
        return True

    def truth(self, node) -> bool | None:
        """bool(obj): False where its `__len__` is 0, as in Python."""
        return self.length(node) > 0 if isinstance(self.cls.find("__len__"), Method) else None

    def index(self, key, node):
        return self.dunder("__getitem__", (key,), node, "is not subscriptable")

    def iterate(self, node) -> ProgramObject:
        if self.cls.find("__iter__") is None and isinstance(self.cls.find("__getitem__"), Method):
            return IndexIterator(self)  # Python's old protocol: obj[0], obj[1], ...
        it = self.dunder("__iter__", (), node, "is not iterable")
        if not isinstance(it, ProgramObject) or isinstance(it, PlainInstance | PlainClass):
            raise self.state.error(
                "type", f"iter() returned non-iterator of type '{type_name(it)}'", node
            )
        return it.iterate(node)

    def as_str(self) -> str | None:
        if self.cls.find("__str__") is None:
            return None
        return self.text("__str__")

    def text(self, name: str) -> str:
        node = self.state.node
        out = self.dunder(name, (), node, f"has no {name}")
        if not isinstance(out, str):
            raise self.state.error(
                "type", f"{name} returned non-string (type {type_name(out)})", node
            )
        return out

    def __repr__(self) -> str:
        if isinstance(self.cls.find("__repr__"), Method):
            return self.text("__repr__")
        return self.default_repr()

    def default_repr(self) -> str:
        """Its repr where no class of its defines `__repr__` (a dataclass's, or object's)."""
        owner = self.cls.owner
        fields = next((c.fields for c in self.cls.chain() if c.fields is not None), None)
        if fields is None:  # object's repr, at an address of the run's own (not its id())
            if self.address is None:
                self.address = self.state.made_up_address()
            return f"<__main__.{self.cls.name} object at {self.address:#x}>"
        if id(self) in owner.showing or len(owner.showing) >= MAX_SHOWN:
            return "..."  # as Python's dataclass repr shows an object inside itself
        owner.showing.add(id(self))
        try:
            shown = ", ".join(f"{n}={owner.represent(self.attrs.get(n))}" for n, _, _ in fields)
        finally:
            owner.showing.discard(id(self))
        return f"{self.cls.name}({shown})"


class IndexIterator(ProgramObject):
    """iter(obj) of an instance with `__getitem__` and no `__iter__`: obj[0], obj[1], ...
    until its `__getitem__` raises IndexError, as Python iterates it."""

    def __init__(self, obj: PlainInstance):
        super().__init__(obj.state)
        self.obj = obj
        self.at = 0

    def describe(self) -> str:
        return "iterator"

    def iterate(self, node) -> ProgramObject:
        return self

    def next_value(self, node):
        try:
            value = self.obj.index(self.at, node)
        except ProgramError as err:
            if exception_of(err) == "IndexError":
                raise StopIteration from None
            raise
        self.at += 1
        return value


class PlainClasses:
    """The program's plain classes and their instances in one run."""

    def __init__(self, functions: Functions, call_value: Callable, evaluate: Callable):
        self.functions = functions
        self.state = functions.state
        self.quotas = functions.quotas
        self.call_value = call_value
        self.evaluate = evaluate
        self.represent: Callable[[object], str] = repr  # set to the run's strings' repr
        self.showing: set[int] = set()  # the dataclass instances whose repr is being made
        # the __init__s running: the instance, the class whose __init__ it is, the call depth
        self.building: list[tuple[PlainInstance, PlainClass, int]] = []

    def define(self, node: ast.ClassDef, base, dataclass: bool) -> PlainClass:
        if base is not None and not isinstance(base, PlainClass):
            raise self.state.error(
                "type",
                f"a class's base is nn.Module, torch.utils.data.Dataset, `object` or one of the "
                f"program's own classes, "
                f"not a {type_name(base)}",
                node.bases[0],
            )
        cls = PlainClass(self, node.name, base)
        fields: list[tuple[str, bool, object]] = []
        inherited = next((c.fields for c in (base.chain() if base else []) if c.fields), [])
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef):
                cls.methods[stmt.name] = Method(self.functions.define(stmt), method_kind(stmt))
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
                has = stmt.value is not None
                value = (
                    held(self.state, self.evaluate(stmt.value), stmt, "a class") if has else None
                )
                if isinstance(value, FieldSpec):  # n: list = field(default_factory=list)
                    has = value.has_default
                if isinstance(stmt, ast.AnnAssign):
                    self.check_field(node, target.id, has, value, fields, stmt)
                    fields.append((target.id, has, value))
                if isinstance(value, FieldSpec) and isinstance(stmt, ast.AnnAssign):
                    if value.factory is None and has:  # as Python: the default stays
                        cls.constants[target.id] = value.default
                elif has:
                    cls.constants[target.id] = value
            if len(cls.methods) + len(cls.constants) > MAX_ATTRIBUTES:
                raise self.state.error(
                    "limit", f"a class may hold at most {MAX_ATTRIBUTES} names", stmt
                )
        if dataclass:
            cls.fields = [f for f in inherited if f[0] not in {n for n, _, _ in fields}] + fields
        return cls

    def check_field(self, node, name: str, has: bool, value, fields: list, stmt) -> None:
        """A dataclass's field, refused where Python's dataclass refuses it."""
        if isinstance(value, FieldSpec) and value.factory is None:
            value = value.default
        if has and isinstance(value, MUTABLE):
            raise self.state.error(
                "runtime",
                f"ValueError: mutable default {type(value)} for field {name} is not allowed: "
                "use default_factory",
                stmt,
            )
        if not has and any(f[1] for f in fields):
            raise self.state.error(
                "type", f"non-default argument '{name}' follows default argument", stmt
            )

    def instantiate(self, cls: PlainClass, args: tuple, kwargs: dict, node) -> PlainInstance:
        self.quotas.items(1, node, "object", made=1)  # each instance counts as an item
        made = PlainInstance(cls)
        init = cls.find("__init__")
        fields = next((c.fields for c in cls.chain() if c.fields is not None), None)
        if isinstance(init, Method):
            self.run_init(made, cls, init, args, kwargs, node)
        elif fields is not None:
            self.init_fields(made, fields, args, kwargs, node)
        elif args or kwargs:
            raise self.state.error("type", f"{cls.name}() takes no arguments", node)
        return made

    def run_init(self, made, cls, init: Method, args, kwargs, node) -> None:
        owner = next(c for c in cls.chain() if c.methods.get("__init__") is init)
        self.building.append((made, owner, self.quotas.depth + 1))
        try:
            result = self.functions.call(init.fn, (made, *args), kwargs, node)
        finally:
            self.building.pop()
        if result is not None:
            raise self.state.error(
                "type", f"__init__() should return None, not '{type_name(result)}'", node
            )

    def init_fields(self, made: PlainInstance, fields, args: tuple, kwargs: dict, node) -> None:
        """A dataclass's own __init__: its fields, by position or by name, or their defaults."""
        shown = f"{made.cls.name}.__init__()"
        if len(args) > len(fields):
            raise self.state.error(
                "type",
                f"{shown} takes {len(fields) + 1} positional arguments but {len(args) + 1} "
                "were given",
                node,
            )
        names = [n for n, _, _ in fields]
        given = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names:
                raise self.state.error(
                    "type", f"{shown} got an unexpected keyword argument '{key}'", node
                )
            if key in given:
                raise self.state.error(
                    "type", f"{shown} got multiple values for argument '{key}'", node
                )
            given[key] = value
        missing = [n for n, has, _ in fields if not has and n not in given]
        if missing:
            listed = " and ".join(f"'{m}'" for m in missing)
            raise self.state.error(
                "type",
                f"{shown} missing {len(missing)} required positional argument"
                f"{'' if len(missing) == 1 else 's'}: {listed}",
                node,
            )
        for name, _, default in fields:
            if name not in given and isinstance(default, FieldSpec):
                spec = default  # each instance's own: a new list from default_factory=list
                default = spec.default
                if spec.factory is not None:
                    default = self.call_value(spec.factory, (), {}, node)
            made.set(name, given.get(name, default), node)

    def super_init(self, args: tuple, kwargs: dict, node) -> None:
        """super().__init__(...) in a plain class's __init__: the next base's __init__ on
        the same instance (object's takes no arguments)."""
        if not self.building or self.state.scope.owner != "__init__":
            raise self.state.error(
                "type", "`super().__init__()` runs only in a class's `__init__`", node
            )
        made, cls, _ = self.building[-1]
        init = cls.base.find("__init__") if cls.base else None
        if isinstance(init, Method):
            self.run_init(made, cls.base, init, args, kwargs, node)
            return
        fields = next((c.fields for c in (cls.base.chain() if cls.base else []) if c.fields), None)
        if fields is not None:
            self.init_fields(made, fields, args, kwargs, node)
        elif args or kwargs:
            raise self.state.error(
                "type",
                "object.__init__() takes exactly one argument (the instance to initialize)",
                node,
            )
