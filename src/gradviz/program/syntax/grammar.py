"""The grammar of the program language as data: the node types it allows, plain words for
the ones it refuses, the context managers, decorators, exceptions and imports it takes, and
small readers of syntax the rules share (`dotted`, `super_init_call`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection

ALLOWED_NODES: tuple[type, ...] = (
    ast.Module,
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.Pass,
    ast.With,
    ast.withitem,
    ast.If,
    ast.For,
    ast.While,
    ast.Break,
    ast.Continue,
    ast.Assert,
    ast.Raise,
    ast.Try,
    ast.ExceptHandler,
    ast.FunctionDef,
    ast.ClassDef,
    ast.AnnAssign,
    ast.arguments,
    ast.arg,
    ast.Return,
    ast.Yield,
    ast.YieldFrom,
    ast.Lambda,
    ast.Import,
    ast.ImportFrom,
    ast.alias,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.SetComp,
    ast.comprehension,
    ast.JoinedStr,
    ast.FormattedValue,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.IfExp,
    ast.Compare,
    ast.Call,
    ast.keyword,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Starred,
    ast.Delete,
    ast.Del,
    ast.Global,
    ast.Nonlocal,
    # operators
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.MatMult,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.Invert,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.Is,
    ast.IsNot,
    ast.In,
    ast.NotIn,
)

ALLOWED_TYPES = frozenset(ALLOWED_NODES)
# Allowed nodes with no rule of their own (their children are checked): the fast path.
NOTHING_TO_CHECK = frozenset(
    {ast.Load, ast.Store, ast.Del, ast.Module, ast.Expr, ast.BinOp, ast.UnaryOp, ast.Subscript}
    | {ast.Slice, ast.withitem, ast.Pass, ast.If, ast.While, ast.Assert, ast.BoolOp, ast.IfExp}
    | {ast.Compare, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.JoinedStr}
    | {ast.FormattedValue, ast.Try, ast.Yield, ast.YieldFrom}
    | {t for t in ALLOWED_NODES if issubclass(t, ast.operator | ast.unaryop | ast.cmpop)}
    | {ast.And, ast.Or}
)

# Plain words for constructs that are refused, by node type.
REFUSALS: dict[type, str] = {
    ast.AsyncFunctionDef: "defining functions (`async def`) is not part of this language",
    ast.AsyncFor: "loops (`async for`) are not part of this language",
    ast.TryStar: "`except*` (exception groups) is not part of this language: write `except`",
    ast.Await: "`await` is not part of this language",
    ast.AsyncWith: "`async with` is not part of this language",
    ast.NamedExpr: "the walrus operator (`:=`) is not part of this language",
    ast.AnnAssign: "annotated assignments (`x: int = 3`) are part of this language only as "
    "the fields of a `@dataclass` class",
    ast.Match: "`match` is not part of this language",
    ast.LShift: "shift operators are not part of this language",
    ast.RShift: "shift operators are not part of this language",
}

# torch's grad modes, for `with` and as decorators; inference_mode runs as no_grad does
# (gradviz.program.runtime.functions.Functions.grad_mode says why)
CONTEXT_MANAGERS = ("no_grad", "enable_grad", "inference_mode")
# `with torch.autograd.detect_anomaly():` runs its block as it is, with a note
# (gradviz.program.objects.functional.ANOMALY_NOTE).
ANOMALY_MANAGER = "torch.autograd.detect_anomaly"
# The exceptions a program may raise (and so end itself with, at that line), and name in
# an `except` clause (gradviz.program.interpreter.control decides which errors it catches).
RAISABLE = (
    "Exception",
    "ValueError",
    "TypeError",
    "RuntimeError",
    "KeyError",
    "IndexError",
    "NotImplementedError",
    "AssertionError",
    "ZeroDivisionError",
    "StopIteration",
)


def grad_manager(node: ast.expr, names: Collection[str]) -> ast.expr | None:
    """What a `with` item or a function decorator calls for a grad mode, as its text reads:
    `torch.no_grad()` (enable_grad, inference_mode), or one of `names`, those that
    `from torch import no_grad [as name]` binds (grad_manager_names); a decorator may leave
    out the parentheses (`@torch.no_grad`). The callee, whose value the run checks (a
    program may bind the name to something else); None for anything else."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func
    if isinstance(node, ast.Name):
        return node if node.id in names else None
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "torch"
        and node.attr in CONTEXT_MANAGERS
    ):
        return node
    return None


_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """list(ast.iter_child_nodes(node)), the same nodes in the same order, without its two
    generators per node (the checker's walk of a 1,000-line program spent half its time
    there): each field in `_fields` order, a node as it is, a list's nodes in turn."""
    kind = type(node)
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(kind._fields)
    out: list[ast.AST] = []
    for name in names:
        try:
            value = getattr(node, name)
        except AttributeError:  # as ast.iter_fields: a field left unset is skipped
            continue
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([item for item in value if isinstance(item, ast.AST)])
    return out


def statements(tree: ast.AST, into: tuple[type, ...] = ()) -> list[ast.stmt]:
    """The statements of a tree, wherever they stand, in the order of the source (the
    checker reads its imports and its `global` and `nonlocal` declarations from them). A
    statement stands only in another's blocks (`_BLOCKS`: a body, an `else`, a `finally`,
    an `except` or a `case`), never inside an expression: only those are walked, not the
    expressions that are most of a tree. `into`: statements whose blocks are not walked
    (a function's own statements leave out those of the functions inside it)."""
    found: list[ast.stmt] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            found.append(node)
            if isinstance(node, into):
                continue
        inside: list[ast.AST] = []
        for name in _BLOCKS:
            block = getattr(node, name, None)
            if type(block) is list:
                inside += block
        stack.extend(reversed(inside))
    return found


# The fields that hold statements (or the `except` and `case` parts that hold them).
_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")


def grad_manager_names(imports: list[ast.Import | ast.ImportFrom]) -> set[str]:
    """The names `from torch import no_grad [as name]` (enable_grad, inference_mode) binds
    anywhere in the program (`imports`: the import statements of `statements`): a `with` or a decorator may call
    them, as `torch.no_grad`."""
    return {
        alias.asname or alias.name
        for node in imports
        if isinstance(node, ast.ImportFrom) and node.module == "torch" and not node.level
        for alias in node.names
        if alias.name in CONTEXT_MANAGERS
    }


# What a program may import (the interpreter binds them to what is available under those
# names today), and the names that may only ever be bound to the module they already are.
IMPORTABLE = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.utils.data",
    "torch.autograd",
    "torch.autograd.functional",
    "math",
    "time",
    "random",
    "numpy",
    "numpy.random",
    "numpy.linalg",
    "typing",
)
# The names of `typing` a program may import, for annotations (read, never evaluated).
TYPING_NAMES = (
    "Any",
    "Callable",
    "Dict",
    "Generator",
    "Iterable",
    "Iterator",
    "List",
    "Literal",
    "Mapping",
    "Optional",
    "Sequence",
    "Set",
    "Tuple",
    "Type",
    "Union",
)
IMPORT_NAMES = {
    "torch": "torch",
    "F": "torch.nn.functional",
    "nn": "torch.nn",
    "optim": "torch.optim",
}
# Modules a program cannot import, with what to use instead (by the import's first part).
IMPORT_ROUTES = {
    "torchvision": "`torchvision` is not available here (a program cannot read files or "
    "download data sets): for real CIFAR-10 images write `images, labels = "
    "gradviz_cifar10_sample(4)` (1 to 20 images, normalised as the tutorial's transforms do), "
    "and open the CIFAR-10 training page for the full tutorial with torchvision",
}
# What a program cannot do because it would read or write files, in plain words (a name
# error, as for any name the language does not have, with no other name suggested).
FILE_ACCESS = {
    "torch.save": "this app's programs cannot write files: torch.save and torch.load are not "
    "available here; keep the model in a variable, or save it from a local Python run",
    "open": "this app's programs cannot read or write files: `open` is not defined here; "
    "write the data into the program (torch.tensor([...])), or use gradviz_cifar10_sample(n) "
    "for real CIFAR-10 images",
}
FILE_ACCESS["torch.load"] = FILE_ACCESS["torch.save"]
NUMPY_FILES = (
    "this app's programs cannot read or write files: `{name}` is not available here; "
    "write the data into the program (np.array([...]))"
)
for _name in [
    "load",
    "save",
    "savez",
    "savez_compressed",
    "loadtxt",
    "savetxt",
    "genfromtxt",
    "fromfile",
    "fromregex",
    "memmap",
    "tofile",
    "DataSource",
]:
    FILE_ACCESS[f"numpy.{_name}"] = NUMPY_FILES.format(name=f"np.{_name}")
# numpy's names left out with their own reason (gradviz.program.runtime.arrays.tables).
_CALLBACK = "numpy cannot call the program's functions; write a loop or use array operations"
UNAVAILABLE = {
    "numpy.empty": "`np.empty` is not available here: it returns uninitialised memory; "
    "use np.zeros",
    "numpy.empty_like": "`np.empty_like` is not available here: it returns uninitialised "
    "memory; use np.zeros_like",
    "numpy.frompyfunc": f"`np.frompyfunc` is not available here: {_CALLBACK}",
    "numpy.vectorize": f"`np.vectorize` is not available here: {_CALLBACK}",
    "numpy.apply_along_axis": f"`np.apply_along_axis` is not available here: {_CALLBACK}",
    "numpy.fromstring": "`np.fromstring` is not available here (it reads raw bytes); use "
    "np.array([...])",
    "numpy.frombuffer": "`np.frombuffer` is not available here (it reads raw bytes); use "
    "np.array([...])",
    "numpy.lib": "`np.lib` is not available here (its helpers reach raw memory)",
    "numpy.ctypeslib": "`np.ctypeslib` is not available here (it reaches raw memory)",
    "numpy.random.bytes": "`np.random.bytes` is not available here: arrays here hold numbers; "
    "use np.random.randint(0, 256, size=n)",
}

# Attributes that reach Python's own machinery (frames, code, globals) on objects that have
# them. Every attribute is allow-listed at run time anyway; these get a plain refusal first.
INTERNAL_ATTRIBUTES = frozenset(
    (
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "gi_running",
        "gi_suspended",
        "cr_frame",
        "cr_code",
        "cr_await",
        "ag_frame",
        "ag_code",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "f_trace",
        "f_lasti",
        "tb_frame",
        "tb_next",
        "tb_lasti",
        "func_globals",
        "func_code",
        "func_closure",
        "func_defaults",
        "co_code",
        "co_consts",
        "co_names",
    )
)


# Names with one leading underscore are the program's own (`_init_weights`, `self._cache`);
# these are PyTorch's and Python's internals under such names, refused wherever they are
# read or set (`m._modules`, `t._version`, `f._backward_hooks`), as is any `_name` read from
# the library itself (`torch._C`, `nn._reduction`: LIBRARY_ROOTS) and `_5`, the name a shown
# value has on the graph (gradviz.program.interpreter.outputs). Names beginning with `__`
# stay refused, but for the methods of DUNDER_METHODS and `super().__init__()`.
INTERNAL_UNDERSCORE = frozenset(
    (
        "_modules", "_parameters", "_buffers", "_non_persistent_buffers_set",
        "_backward_hooks", "_backward_pre_hooks", "_forward_hooks", "_forward_pre_hooks",
        "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
        "_forward_pre_hooks_with_kwargs", "_state_dict_hooks", "_state_dict_pre_hooks",
        "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_is_full_backward_hook",
        "_post_accumulate_grad_hooks", "_apply", "_call_impl", "_wrapped_call_impl",
        "_compiled_call_impl", "_named_members", "_get_name", "_load_from_state_dict",
        "_save_to_state_dict", "_slow_forward", "_replicate_for_data_parallel",
        "_version", "_base", "_cdata", "_grad", "_grad_fn", "_is_view", "_make_subclass",
        "_typed_storage", "_untyped_storage", "_use_count", "_python_dispatch",
        "_C", "_VF", "_ops", "_dynamo", "_inductor", "_functorch", "_prims", "_refs",
        "_jit_internal", "_utils", "_tensor", "_classes", "_library", "_reduction",
        "_step_count", "_optimizer_step_code", "_opt_called", "_last_lr", "_initial_step",
        "_with_counter", "_zero_grad_profile_name", "_patch_step_function",
        "_optimizer_load_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
        "_optimizer_state_dict_post_hooks", "_optimizer_state_dict_pre_hooks",
        "_optimizer_step_post_hooks", "_optimizer_step_pre_hooks",
        "_warned_capturable_if_run_uncaptured", "_get_lr_called_within_step", "_is_initial",
        "_asdict", "_replace", "_fields", "_make", "_field_defaults",
        "_getframe", "_current_frames", "_exit", "_xoptions", "_thread", "_io", "_imp",
    )
)  # fmt: skip
LIBRARY_ROOTS = frozenset(
    [*(m.split(".")[0] for m in IMPORTABLE), *IMPORT_NAMES, "dataclasses", "autograd"]
)
SHOWN_VALUE_NAME = re.compile(r"_[0-9]+")


def underscore_refusal(name: str) -> str | None:
    """Why a name beginning with `_` (other than `_` itself) is refused, or None: it is the
    program's own to use."""
    if name.startswith("__"):
        return "names beginning with `__` (Python's 'dunder' and private names) are not allowed"
    if name in INTERNAL_UNDERSCORE or name.startswith("_raw_saved_"):
        return "it is a name of PyTorch's or Python's internals, not part of this language"
    if SHOWN_VALUE_NAME.fullmatch(name):
        return "`_` and a line number names a value shown under its line (as `_5` in a notebook)"
    return None


# The only names starting with `_` a program may read: what an autograd node saved for its
# backward pass (`y.grad_fn._saved_self`), as PyTorch's autograd notes show. Read only (never
# assigned), and answered only by a grad_fn (gradviz.program.recording.grad_fns), only with
# tensors, numbers and sizes; any other object refuses them as it refuses any unknown name.
SAVED_VIEWS = frozenset(
    "_saved_" + name
    for name in (
        "self", "other", "result", "input", "weight", "bias", "mat1", "mat2", "exponent",
        "dim", "keepdim", "target", "indices", "mask", "alpha", "beta", "min", "max",
        "self_sym_sizes", "other_sym_sizes", "negative_slope", "p", "reduction",
        "ignore_index", "total_weight", "eps", "stride", "padding", "dilation", "groups",
        "index", "src", "sizes", "size", "start", "end", "step", "split_size", "chunks",
        "scale", "threshold", "value", "approximate", "ord", "tensors", "mean", "rstd",
        "normalized_shape", "running_mean", "running_var", "training", "train",
    )
)  # fmt: skip

# Classes: `class Net(nn.Module):` with methods only (gradviz.program.interpreter.classes runs them),
# and plain classes (`class Accumulator:`, `class Config(Base):`, `@dataclass`) run by
# gradviz.program.interpreter.plain_classes.
MODULE_BASES = ("nn.Module", "torch.nn.Module")
DATASET_BASE = ".Dataset"  # class Pairs(torch.utils.data.Dataset): a dotted base, if torch's
BASE_REFUSAL = (
    "a class's base is nn.Module, torch.utils.data.Dataset, `object` or one of the program's "
    "own classes named above it"
)
MODULE_IMPORT = ("torch.nn", "Module")  # from torch.nn import Module: `class Net(Module):`
MAX_CLASSES = 20  # classes in one program
# The only dunder methods a plain class may define; Python calls each for one operation.
DUNDER_METHODS = (
    "__init__",
    "__len__",
    "__getitem__",
    "__iter__",
    "__call__",
    "__repr__",
    "__str__",
)
METHOD_DECORATORS = ("staticmethod", "classmethod", "property")
CLASS_DECORATORS = ("dataclass",)  # from dataclasses import dataclass
DATACLASS_IMPORT = "dataclasses.dataclass"
FIELD_IMPORT = "dataclasses.field"  # field(default_factory=list) in a dataclass


def dotted(node: ast.AST) -> str | None:
    """`torch.nn.Module` as text, for a chain of plain names; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def super_init_call(stmt: ast.stmt) -> ast.Call | None:
    """The `super()` call of a statement `super().__init__(...)` (or `super(Net, self)...`)."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    func = call.func
    if not isinstance(func, ast.Attribute):  # arguments: a plain class's base's __init__
        return None
    inner = func.value
    ok = func.attr == "__init__" and isinstance(inner, ast.Call)
    ok = ok and isinstance(inner.func, ast.Name) and inner.func.id == "super"
    return inner if ok and not inner.keywords else None


def super_method_calls(method: ast.FunctionDef) -> list[ast.Call]:
    """The `super()` calls of a method's `super().name(...)` calls (`super().forward(x)`,
    `super(Net, self).describe()`), outside the functions and lambdas inside it (where
    Python's `super()` has no class to start from)."""
    found, stack = [], list(method.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super"
            and not node.func.value.keywords
        ):
            found.append(node.func.value)
        stack.extend(child_nodes(node))
    return found
