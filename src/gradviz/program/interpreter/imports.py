"""What an import binds: a module of gradviz.program.syntax.grammar.IMPORTABLE as the namespace
a program already reaches under that name, and a name brought in from one (`from math import
sqrt`, `from torch.nn import Module`, `from typing import List`) as the same value its dotted
form reads (`math.sqrt`, `torch.nn.Module`): a name the module's table lacks is refused at
the import's line, with the names it probably meant."""

from __future__ import annotations

import ast

from gradviz.program.allowlists.nntables import ObjectSpec
from gradviz.program.allowlists.tables import FnSpec
from gradviz.program.interpreter.expressions import missing_member
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.builtins import MATH
from gradviz.program.runtime.clocks import TIME
from gradviz.program.runtime.values import (
    DATACLASS,
    DATACLASS_FIELD,
    NAMESPACES,
    ClassRef,
    FunctionRef,
    Namespace,
)
from gradviz.program.syntax.grammar import (
    DATACLASS_IMPORT,
    FIELD_IMPORT,
    IMPORTABLE,
    TYPING_NAMES,
)


class TypeHint(Namespace):
    """A name of `typing` (`List`, `Optional`): for annotations, which are read, never
    evaluated; like a module it can be neither called, kept nor subscripted."""

    def __repr__(self) -> str:
        return self.path


TYPING = Namespace("typing", {name: TypeHint(f"typing.{name}", {}) for name in TYPING_NAMES})


def module_namespace(module: str) -> Namespace:
    """What an import binds: the namespace a program already reaches under that name, or an
    empty one for an allowed module with nothing in it yet (torch.optim)."""
    if module == "math":
        return MATH
    if module == "time":
        return TIME
    if module == "typing":
        return TYPING
    if module == "torch.nn.functional":
        return NAMESPACES["F"]
    namespace: object = NAMESPACES["torch"]
    for part in module.split(".")[1:]:
        namespace = namespace.members.get(part) if isinstance(namespace, Namespace) else None
    return namespace if isinstance(namespace, Namespace) else Namespace(module, {})


def numpy_part(numpy: Namespace, module: str) -> Namespace:
    """numpy, numpy.random or numpy.linalg of the run's numpy namespace."""
    for part in module.split(".")[1:]:
        numpy = numpy.members[part]
    return numpy


def imported_name(state: RunState, source: Namespace, name: str, node: ast.AST):
    """`from <source> import <name>`: a class of torch's tables as a ClassRef (called, never
    kept), a function as a FunctionRef (as `loss = F.mse_loss` keeps it), anything else the
    module holds as it is (constants, types, submodules, the functions the interpreter runs
    itself); a name the module lacks refused as `source.name` would be."""
    member = source.members.get(name)
    if member is None:
        raise missing_member(state, source, name, node)
    if isinstance(member, ObjectSpec):
        return ClassRef(f"{source.path}.{name}", member)
    if isinstance(member, FnSpec):
        return FunctionRef(f"{source.path}.{name}", member)
    return member


class Imports:
    """The run's import statements: each bound name gets its module's namespace or the
    member the module's table gives (Python's `random` and numpy are the run's own)."""

    def __init__(self, state: RunState, random, library):
        self.state = state
        self.random = random  # gradviz.program.runtime.pyrandom.ProgramRandom
        self.library = library  # gradviz.program.runtime.torch_calls.Library (its numpy)

    def bind(self, stmt: ast.Import | ast.ImportFrom) -> None:
        """Bind what the import names (checked: only gradviz.program.syntax.grammar.IMPORTABLE, and
        names from those modules, which gradviz.program.interpreter.imports finds)."""
        if isinstance(stmt, ast.ImportFrom):
            pairs = [(f"{stmt.module}.{a.name}", a.asname or a.name) for a in stmt.names]
        else:
            pairs = [(a.name, a.asname) for a in stmt.names if a.asname]
            tops = [a.name.split(".")[0] for a in stmt.names if not a.asname]
            pairs += [(top, top) for top in tops]  # `import torch.nn` binds torch
        for module, bound in pairs:
            if module == "random":
                value = self.random.namespace()
            elif module in ("numpy", "numpy.random", "numpy.linalg"):
                value = numpy_part(self.library.arrays.namespace(), module)
            elif module == DATACLASS_IMPORT:
                value = DATACLASS
            elif module == FIELD_IMPORT:
                value = DATACLASS_FIELD
            elif module in IMPORTABLE:
                value = module_namespace(module)
            else:
                value = self.imported(module, stmt)
            if NAMESPACES.get(bound) is not value:  # torch, F, nn and optim are there already
                self.state.scope.home(bound).names[bound] = value

    def imported(self, path: str, stmt: ast.stmt):
        """`from <module> import <name>` (checked: the module is IMPORTABLE)."""
        source, _, name = path.rpartition(".")
        if source == "random":
            space = self.random.namespace()
        elif source.split(".")[0] == "numpy":
            space = numpy_part(self.library.arrays.namespace(), source)
        else:
            space = module_namespace(source)
        node = next((a for a in getattr(stmt, "names", ()) if a.name == name), stmt)
        return imported_name(self.state, space, name, node)
