"""The rules of blocks and names: where `return`, `break`, `continue` and `raise` may stand,
which names a program may bind, and the shape of `def`, `with` and `import`."""

from __future__ import annotations

import ast

from gradviz.program.syntax.grammar import (
    ANOMALY_MANAGER,
    DATACLASS_IMPORT,
    FIELD_IMPORT,
    FILE_ACCESS,
    IMPORT_NAMES,
    IMPORT_ROUTES,
    IMPORTABLE,
    METHOD_DECORATORS,
    RAISABLE,
    dotted,
    grad_manager,
    underscore_refusal,
)

_LOOP_NAMES = "a loop assigns to plain names only: for i, (a, b) in enumerate(pairs): ..."
_PLAIN_NAMES = "unpacking works into plain names only: a, (b, c) = ... or first, *rest = ..."


class BlockRules:
    """The rules of the statements that open blocks or bind names: `def`, `lambda`, loops,
    imports and assignment targets (the Checker below walks the tree and calls them)."""

    known_names: set[str]
    grad_names: set[str]  # grammar.grad_manager_names: `from torch import no_grad`'s
    self_targets: set[int]  # `self.name = ...` targets in methods (ClassRules)

    def error(self, kind: str, message: str, node: ast.AST | None, hint: str | None = None):
        raise NotImplementedError

    def check_identifier(self, name: str, node: ast.AST, what: str) -> None:
        """A name the program writes: one leading underscore makes it the program's own
        (`_init_weights`, `self._cache`), but for the names underscore_refusal gives a
        reason for; keywords and imported names are never `_name`s (they reach torch)."""
        if not name.startswith("_"):
            return
        if what in ("keyword argument", "imported name") and name != "_":
            reason = f"{what}s beginning with `_` are not part of this language"
        else:
            reason = underscore_refusal(name)
        if reason is not None:
            raise self.error(
                "forbidden", f"the {what} `{name}` starts with an underscore: {reason}", node
            )

    def check_new_name(self, name: str, node: ast.AST, what: str = "name") -> None:
        """A name a statement binds: not private, not one of the language's own names."""
        self.check_identifier(name, node, what)
        if name in self.known_names:
            raise self.error(
                "forbidden",
                f"`{name}` is a built-in name of this language and cannot be reassigned; "
                "pick another name",
                node,
            )

    def check_function(self, node: ast.FunctionDef | ast.Lambda, method: bool = False) -> None:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                kind = decorator.id if isinstance(decorator, ast.Name) else None
                if method and kind in METHOD_DECORATORS:
                    continue
                if grad_manager(decorator, self.grad_names) is None:
                    raise self.error(
                        "forbidden",
                        "this decorator is not part of this language: a function or method "
                        "may be decorated with @torch.no_grad(), @torch.enable_grad() or "
                        "@torch.inference_mode(), a method also with @staticmethod, "
                        "@classmethod or @property",
                        decorator,
                    )
            if not method:  # a method's name was checked with its class
                self.check_new_name(node.name, node, "function name")
        args = node.args
        seen: set[str] = set()
        for a in [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]:
            if a is None:
                continue
            self.check_new_name(a.arg, a, "parameter")
            if a.arg in seen:
                raise self.error("syntax", f"the parameter `{a.arg}` is named twice", a)
            seen.add(a.arg)

    def check_starred(self, elts: list[ast.expr], plain: str) -> None:
        """An unpacking target's names: at most one of them starred (`a, *rest = xs`), and
        that one a plain name."""
        stars = [e for e in elts if isinstance(e, ast.Starred)]
        if len(stars) > 1:
            raise self.error("syntax", "multiple starred expressions in assignment", stars[1])
        for star in stars:
            if not isinstance(star.value, ast.Name):
                raise self.error("forbidden", plain, star)

    def check_loop_target(self, target: ast.AST) -> None:
        """`for` and comprehension targets: names, or (nested) tuples of names."""
        if isinstance(target, ast.Name):
            self.check_new_name(target.id, target, "loop variable")
        elif isinstance(target, ast.Tuple | ast.List):
            self.check_starred(target.elts, _LOOP_NAMES)
            for elt in target.elts:
                self.check_loop_target(elt.value if isinstance(elt, ast.Starred) else elt)
        else:
            raise self.error("forbidden", _LOOP_NAMES, target)

    def check_import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                raise self.error(
                    "forbidden", "relative imports are not part of this language", node
                )
            pairs = []
            for alias in node.names:
                if alias.name == "*":
                    raise self.error(
                        "forbidden",
                        f"`from {node.module} import *` is not allowed: name what you need",
                        node,
                    )
                full = f"{node.module}.{alias.name}"
                pairs.append((full, alias.asname or alias.name, full, alias))
        else:  # `import torch.nn` binds `torch`; `import torch.nn as nn` binds torch.nn
            pairs = [
                (a.name, a.asname, a.name, node)
                if a.asname
                else (a.name, *[a.name.split(".")[0]] * 2, node)
                for a in node.names
            ]
        for module, bound, bound_module, where in pairs:
            source = getattr(node, "module", None)
            if (module, bound) in ((DATACLASS_IMPORT, "dataclass"), (FIELD_IMPORT, "field")):
                pass  # from dataclasses import dataclass, field: the class decorator, fields
            elif module not in IMPORTABLE and source in IMPORTABLE:
                # from math import sqrt: the interpreter binds what `math.sqrt` reads
                self.check_identifier(module.rsplit(".", 1)[1], where, "imported name")
            elif source == "dataclasses":
                raise self.error(
                    "forbidden",
                    "from dataclasses a program imports `dataclass` and `field` only, under "
                    "those names: from dataclasses import dataclass, field",
                    where,
                )
            elif module not in IMPORTABLE:
                if module.split(".")[0] in IMPORT_ROUTES:
                    raise self.error("forbidden", IMPORT_ROUTES[module.split(".")[0]], node)
                raise self.error(
                    "forbidden",
                    f"`{source or module}` is not available: imports can bring in "
                    + ", ".join(IMPORTABLE)
                    + " only (torch, F, nn and optim are already there)",
                    node,
                )
            if bound in IMPORT_NAMES and IMPORT_NAMES[bound] != bound_module:
                raise self.error(
                    "forbidden",
                    f"`{bound}` is {IMPORT_NAMES[bound]} in this language and cannot name "
                    f"{module}; pick another name",
                    node,
                )
            if bound not in IMPORT_NAMES:
                self.check_new_name(bound, node)

    def check_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.check_new_name(target.id, target)
            return
        if isinstance(target, ast.Tuple | ast.List):
            self.check_starred(target.elts, _PLAIN_NAMES)
            for elt in target.elts:
                elt = elt.value if isinstance(elt, ast.Starred) else elt
                if not isinstance(elt, ast.Name | ast.Tuple | ast.List):
                    raise self.error("forbidden", _PLAIN_NAMES, elt)
                self.check_target(elt)
            return
        if isinstance(target, ast.Subscript):
            inner = target.value
            while isinstance(inner, ast.Subscript):
                inner = inner.value
            if isinstance(inner, ast.Attribute):  # acc.data[0] = 1: an attribute's item
                inner = inner.value
            if not isinstance(inner, ast.Name):
                raise self.error(
                    "forbidden",
                    "item assignment works on a named tensor, list or dict only: t[0] = 1",
                    target,
                )
            return
        if isinstance(target, ast.Attribute):  # in a method, self.fc = ... (checked when run)
            if id(target) in self.self_targets:
                return
            if not isinstance(target.value, ast.Name):
                raise self.error(
                    "forbidden",
                    "only `t.grad = ...`, `t.requires_grad = ...` and the attributes of the "
                    "program's own objects (`self.name = ...`, `cfg.n_embd = 64`) can be "
                    "assigned to",
                    target,
                )
            return  # which objects take which attributes is decided when it runs
        raise self.error("forbidden", "this kind of assignment target is not supported", target)

    def check_delete(self, target: ast.AST) -> None:
        """`del name`, `del items[i]`, `del table[key]` (and several, `del a, b`): never one
        of the language's own names, nor an attribute."""
        if isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.check_delete(elt)
        elif isinstance(target, ast.Name):
            if target.id in self.known_names:
                raise self.error(
                    "forbidden",
                    f"`{target.id}` is a built-in name of this language and cannot be deleted",
                    target,
                )
            self.check_identifier(target.id, target, "name")
        elif isinstance(target, ast.Subscript) and isinstance(
            target.value, ast.Name | ast.Subscript
        ):
            self.check_target(target)
        else:
            raise self.error(
                "forbidden", "`del` takes a name, `items[i]` or `table[key]` only", target
            )

    def check_raise(self, node: ast.Raise, in_handler: bool = False) -> None:
        """`raise ValueError("...")` (or a bare exception name) from RAISABLE: it ends the
        program with that error at its line, as an uncaught raise does in Python; a bare
        `raise` only inside an `except` block (`in_handler`), where it re-raises."""
        exc = node.exc
        if exc is None and node.cause is None:
            if not in_handler:
                raise self.error(
                    "syntax",
                    "a bare `raise` re-raises the exception an `except` block is handling: "
                    'use it inside one, or name the exception: raise ValueError("why")',
                    node,
                )
            return
        name = exc.func if isinstance(exc, ast.Call) else exc
        if (
            node.cause is not None
            or not isinstance(name, ast.Name)
            or name.id not in RAISABLE
            or (isinstance(exc, ast.Call) and exc.keywords)
        ):
            raise self.error(
                "forbidden",
                '`raise` takes one of Python\'s exceptions here, as in `raise ValueError("why")`: '
                + ", ".join(RAISABLE),
                node,
            )

    def check_handler(self, node: ast.ExceptHandler) -> None:
        """`except:`, `except ValueError:`, `except (TypeError, KeyError) as e:`: exceptions
        of RAISABLE only, named plainly; `e` a new name."""
        kind = node.type
        names = kind.elts if isinstance(kind, ast.Tuple) else [] if kind is None else [kind]
        if (isinstance(kind, ast.Tuple) and not names) or any(
            not isinstance(n, ast.Name) or n.id not in RAISABLE for n in names
        ):
            raise self.error(
                "forbidden",
                "`except` takes Python's exceptions by name here, as in `except ValueError:` "
                "or `except (TypeError, KeyError) as e:`: " + ", ".join(RAISABLE),
                kind,
            )
        if node.name is not None:
            self.check_new_name(node.name, node, "exception variable")

    def check_with(self, node: ast.With) -> None:
        for item in node.items:
            expr = item.context_expr
            ok = (
                isinstance(expr, ast.Call) and grad_manager(expr, self.grad_names) is expr.func
            ) or (
                isinstance(expr, ast.Call)
                and not expr.args
                and not expr.keywords
                and dotted(expr.func) == ANOMALY_MANAGER
            )
            if isinstance(expr, ast.Call) and getattr(expr.func, "id", None) == "open":
                raise self.error("forbidden", FILE_ACCESS["open"], expr)
            if not ok:
                raise self.error(
                    "forbidden",
                    "`with` works with torch.no_grad(), torch.enable_grad(), "
                    "torch.inference_mode() and torch.autograd.detect_anomaly() only",
                    expr,
                )
            if item.optional_vars is not None:
                raise self.error(
                    "forbidden", "`with ... as name` is not supported here", item.optional_vars
                )
