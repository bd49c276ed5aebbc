"""Text a program makes: how values print, f-strings, `str.format` and `%` formatting, under
the caps.

Python's own formatting reads attributes (str.format's "{0.__class__}") and runs a value's
`__format__`; here neither happens on a program's values. `Strings.represent` writes each
kind of value itself (tensors as PyTorch prints them, with their simulated device under
simulated CUDA), with a bound on its length. A format spec (`f"{x:>8.3f}"`, `'%5d'`) is read
by this module first and refused if its width or precision would pass the string cap
(gradviz.program.budgets.language_caps); only then is one plain number or string formatted by Python.
`str.format` is read here field by field (string.Formatter's parser only splits the text):
a field names an argument by position or keyword and may index the program's own lists,
tuples and dicts (`{0[1]}`, `{table[key]}`); an attribute (`{0.grad}`, `{0.__class__}`) is
refused, whatever it names.
"""

from __future__ import annotations

import ast
import re
import string
from collections import OrderedDict

import numpy as np
import torch

from gradviz.devices import simulated as devices
from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.values import ProgramObject, clipped, type_name

# [[fill]align][sign][z][#][0][width][grouping][.precision][type], Python's mini-language
_SPEC = re.compile(
    r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d+)?[_,]?(?:\.(?P<precision>\d+))?[bcdeEfFgGnosxX%]?",
    re.DOTALL,
)
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?"
    r"(?:\.(?P<precision>\*|\d*))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])?"
)
_MAX_DEPTH = 50  # nesting shown when a list holds lists ...
# a str.format field: the argument, then `.attribute` and `[index]` parts
_FIELD = re.compile(r"(?P<first>[^.\[]*)(?P<rest>(?:\.[^.\[]*|\[[^\]]*\])*)", re.DOTALL)
_PART = re.compile(r"\.(?P<attr>[^.\[]*)|\[(?P<key>[^\]]*)\]", re.DOTALL)


class _TooLong(Exception):
    pass


class _Pieces:
    """A string being made piece by piece: refused as soon as its pieces together pass the
    string cap, not after they are joined."""

    def __init__(self, quotas: Quotas, node):
        self.quotas = quotas
        self.node = node
        self.parts: list[str] = []
        self.size = 0

    def add(self, piece: str) -> None:
        self.parts.append(piece)
        self.size += len(piece)
        if self.size > self.quotas.limits.max_string_length:
            self.quotas.chars(self.size, self.node)

    def text(self) -> str:
        self.quotas.chars(self.size, self.node)
        return "".join(self.parts)


class _Shown:
    """A value's text as the program's print() makes it, where a repr() asks for it."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


class Strings:
    """Writes values as text and formats them, within the run's string caps."""

    def __init__(self, state: RunState, quotas: Quotas):
        self.state = state
        self.quotas = quotas

    # -- values as text

    def show(self, value, node=None, cap: int | None = None) -> str:
        """str(value) as a program sees it: a device prints as Python prints it ("cuda:0"),
        in print(), str(), f-strings and `%s` alike."""
        if isinstance(value, str):
            return value
        if isinstance(value, torch.device | np.generic | np.dtype):
            return str(value)  # np.float32(1.5) prints as 1.5
        if isinstance(value, ProgramObject) and value.as_str() is not None:
            return value.as_str()  # a caught exception's message
        return self.represent(value, node, cap)

    def represent(self, value, node=None, cap: int | None = None, cut: bool = False) -> str:
        """repr(value) as a program sees it; refused (a "limit" error) past `cap` characters
        (the string cap), or, with cap=-1 or cut=True, cut short with "…"."""
        limit = self.state.limits.max_string_length if cap is None or cap < 0 else cap
        parts: list[str] = []
        size = [0]
        try:
            self._write(value, parts, size, limit, 0)
        except _TooLong:
            if cap == -1 or cut:
                return "".join(parts)[:limit] + "…"
            raise self.state.error(
                "limit",
                f"this would make a string of more than {limit:,} characters; the limit is "
                f"{self.state.limits.max_string_length:,} characters per string",
                node,
            ) from None
        return "".join(parts)

    def _write(self, value, parts: list[str], size: list[int], limit: int, depth: int) -> None:
        def put(text: str) -> None:
            parts.append(text)
            size[0] += len(text)
            if size[0] > limit:
                raise _TooLong

        if isinstance(value, list | tuple) and not isinstance(value, torch.Size):
            if depth > _MAX_DEPTH:
                put("[...]" if isinstance(value, list) else "(...)")
                return
            put("[" if isinstance(value, list) else "(")
            for i, item in enumerate(value):
                if i:
                    put(", ")
                self._write(item, parts, size, limit, depth + 1)
            put("]" if isinstance(value, list) else ("," if len(value) == 1 else "") + ")")
        elif isinstance(value, set):
            if not value:
                put("set()")
                return
            if depth > _MAX_DEPTH:
                put("{...}")
                return
            put("{")
            for i, item in enumerate(value):
                if i:
                    put(", ")
                self._write(item, parts, size, limit, depth + 1)
            put("}")
        elif isinstance(value, dict):
            if depth > _MAX_DEPTH:
                put("{...}")
                return
            put("{")
            for i, (k, v) in enumerate(value.items()):
                if i:
                    put(", ")
                self._write(k, parts, size, limit, depth + 1)
                put(": ")
                self._write(v, parts, size, limit, depth + 1)
            put("}")
        elif isinstance(value, ProgramObject) and value.entries() is not None:
            shown = {k: _Shown(self.represent(v, cap=-1)) for k, v in value.entries().items()}
            put(repr(OrderedDict(shown)))  # OrderedDict's own form, as this Python prints it
        elif isinstance(value, ProgramObject) and type(value).__repr__ is object.__repr__:
            put(f"<{value.describe()} object>")  # not gradviz's own class and address
        elif isinstance(value, torch.Tensor) and self.state.shadow is not None:
            put(devices.tensor_repr(value, self.state.shadow.device_of(value)))
        else:
            put(repr(value))

    # -- f-strings

    def fstring(self, node: ast.JoinedStr, evaluate) -> str:
        pieces = _Pieces(self.quotas, node)
        for part in node.values:
            if isinstance(part, ast.Constant):
                pieces.add(part.value)
                continue
            value = evaluate(part.value)
            spec = "" if part.format_spec is None else self.fstring(part.format_spec, evaluate)
            pieces.add(self.format_value(value, spec, part.conversion, part))
        return pieces.text()

    def format_value(self, value, spec: str, conversion: int, node) -> str:
        """One `{value!conversion:spec}` of an f-string."""
        if conversion in (ord("r"), ord("a")):
            value = self.represent(value, node)
            value = ascii(value)[1:-1] if conversion == ord("a") else value
        elif conversion == ord("s"):
            value = self.show(value, node)
        if isinstance(value, torch.Tensor) and value.dim() == 0:
            # Tensor.__format__: a one-value tensor formats as its number (f"{t}" is
            # "3.107043981552124" where print(t) is "tensor(3.1070)")
            value = value.item()
        if not spec:
            return self.show(value, node)
        self.check_spec(spec, node)
        if not isinstance(value, bool | int | float | str | np.number | np.bool_):
            raise self.state.error(
                "type",
                f"the format `:{spec}` applies to numbers, strings and one-value tensors, "
                f"not to a {type_name(value)}",
                node,
            )
        try:
            return format(value, spec)
        except (ValueError, TypeError, OverflowError) as exc:
            raise self.state.error("runtime", f"{type(exc).__name__}: {exc}", node) from None

    def check_spec(self, spec: str, node) -> None:
        match = _SPEC.fullmatch(spec)
        if match is None:
            raise self.state.error("type", f"`{clipped(spec)}` is not a format spec", node)
        for what in ("width", "precision"):
            self._check_size(match.group(what), what, node)

    def _check_size(self, digits: str | None, what: str, node) -> None:
        if digits and (len(digits) > 9 or int(digits) > self.state.limits.max_string_length):
            raise self.state.error(
                "limit",
                f"a format {what} of {int(digits):,}; the limit is "
                f"{self.state.limits.max_string_length:,} characters per string",
                node,
            )

    # -- str.format

    def format_method(self, template: str, args: tuple, kwargs: dict, node) -> str:
        """template.format(*args, **kwargs), as Python's str.format (`FormatFields`)."""
        return FormatFields(self).format(template, args, kwargs, node, [0, None], 2)

    # -- '%' formatting

    def percent(self, template: str, args, node) -> str:
        """template % args, as Python's printf-style formatting, one value at a time."""
        positional = list(args) if isinstance(args, tuple) else [args]
        mapping = args if isinstance(args, dict) else None
        used_keys = False
        pieces = _Pieces(self.quotas, node)
        pos = 0
        for m in _PERCENT.finditer(template):
            pieces.add(template[pos : m.start()])
            pos = m.end()
            kind = m.group("type")
            if kind is None:
                where = m.end()
                bad = template[where] if where < len(template) else ""
                message = (
                    f"unsupported format character '{bad}' at index {where}"
                    if bad
                    else "incomplete format"
                )
                raise self.state.error("runtime", f"ValueError: {message}", node)
            if kind == "%":
                pieces.add("%")
                continue
            if "*" in (m.group("width") or "") + (m.group("precision") or ""):
                raise self.state.error("type", "`*` widths in `%` formats are not supported", node)
            self._check_size(m.group("width"), "width", node)
            self._check_size(m.group("precision"), "precision", node)
            if m.group("key") is not None:
                if mapping is None:
                    raise self.state.error("runtime", "TypeError: format requires a mapping", node)
                used_keys = True
                if m.group("key") not in mapping:
                    raise self.state.error("runtime", f"KeyError: {m.group('key')!r}", node)
                value = mapping[m.group("key")]
            elif not positional or (mapping is not None and used_keys):
                raise self.state.error(
                    "runtime", "TypeError: not enough arguments for format string", node
                )
            else:
                value = positional.pop(0)
            pieces.add(self._percent_one(m, kind, value, node))
        pieces.add(template[pos:])
        if positional and mapping is None:
            raise self.state.error(
                "runtime", "TypeError: not all arguments converted during string formatting", node
            )
        return pieces.text()

    def _percent_one(self, m: re.Match, kind: str, value, node) -> str:
        precision = m.group("precision")
        spec = "%" + m.group("flags") + (m.group("width") or "")
        spec += "" if precision is None else "." + precision
        if kind in "rsa":
            text = self.show(value, node) if kind == "s" else self.represent(value, node)
            value, kind = (ascii(text)[1:-1] if kind == "a" else text), "s"
        elif isinstance(value, torch.Tensor):
            if value.numel() != 1:
                raise self.state.error(
                    "runtime",
                    f"TypeError: %{kind} format needs a number; a tensor of "
                    f"{value.numel()} values is not one",
                    node,
                )
            value = value.item()
        elif not isinstance(value, bool | int | float | str):
            raise self.state.error(
                "runtime",
                f"TypeError: %{kind} format: a number is required, not {type_name(value)}",
                node,
            )
        try:
            return (spec + kind) % (value,)
        except (ValueError, TypeError, OverflowError) as exc:
            raise self.state.error("runtime", f"{type(exc).__name__}: {exc}", node) from None


class FormatFields:
    """str.format, one field at a time, with the f-strings' checks (`Strings.format_value`)
    and string caps."""

    def __init__(self, strings: Strings):
        self.strings = strings
        self.state = strings.state

    def format(self, template: str, args, kwargs, node, numbering: list, depth: int) -> str:
        if depth <= 0:  # as Python: a spec's fields may not have fields of their own
            raise self.state.error("runtime", "ValueError: Max string recursion exceeded", node)
        pieces = _Pieces(self.strings.quotas, node)
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError as exc:
            raise self.state.error("runtime", f"ValueError: {exc}", node) from None
        for literal, field, spec, conversion in parsed:
            pieces.add(literal)
            if field is None:
                continue
            value = self._field(field, args, kwargs, numbering, node)
            if spec and "{" in spec:  # '{:{width}}': its own fields first
                spec = self.format(spec, args, kwargs, node, numbering, depth - 1)
            if conversion not in (None, "r", "s", "a"):
                raise self.state.error(
                    "runtime",
                    f"ValueError: Unknown conversion specifier {clipped(conversion)}",
                    node,
                )
            code = -1 if conversion is None else ord(conversion)
            pieces.add(self.strings.format_value(value, spec or "", code, node))
        return pieces.text()

    def _field(self, field: str, args, kwargs, numbering: list, node):
        """The value a field names: an argument, then its `[index]` parts, read by the
        program's own rules (lists, tuples, dicts); never an attribute."""
        error = self.state.error
        match = _FIELD.fullmatch(field)
        if match is None:
            raise error(
                "runtime",
                "ValueError: Only '.' or '[' may follow ']' in format field specifier",
                node,
            )
        first, rest = match.group("first"), match.group("rest")
        if first == "" or first.isdecimal():
            way = "auto" if first == "" else "manual"
            if numbering[1] not in (None, way):
                names = ("automatic field numbering", "manual field specification")
                before, now = names if way == "manual" else names[::-1]
                raise error("runtime", f"ValueError: cannot switch from {before} to {now}", node)
            numbering[1] = way
            index = numbering[0] if first == "" else self._number(first, node)
            numbering[0] += first == ""
            if index >= len(args):
                raise error(
                    "runtime",
                    f"IndexError: Replacement index {index} out of range for positional args tuple",
                    node,
                )
            value = args[index]
        elif first not in kwargs:
            raise error("runtime", f"KeyError: {clipped(repr(first))}", node)
        else:
            value = kwargs[first]
        for part in _PART.finditer(rest):
            if part.group("attr") is not None:
                raise error(
                    "forbidden",
                    f"a format field reads no attributes (`{{{clipped(field)}}}`): pass the value "
                    "itself, as in '{}'.format(x.grad) or f\"{x.grad}\"",
                    node,
                )
            value = self._field_item(value, part.group("key"), field, node)
        return value

    def _number(self, digits: str, node) -> int:
        """A field's argument number or index, within what Python's own parser reads."""
        if len(digits) > 18:
            raise self.state.error(
                "runtime", "ValueError: Too many decimal digits in format string", node
            )
        return int(digits)

    def _field_item(self, value, key: str, field: str, node):
        """`{0[key]}`: an item of one of the program's lists, tuples or dicts (an index of
        digits is a number, anything else a string key, as Python reads it)."""
        index = self._number(key, node) if key.isdecimal() else key
        if not isinstance(value, list | tuple | dict) or isinstance(value, torch.Size):
            raise self.state.error(
                "type",
                f"`{{{clipped(field)}}}`: a format field indexes lists, tuples and dicts only, not a "
                f"{type_name(value)}",
                node,
            )
        if not isinstance(value, dict) and not isinstance(index, int):
            raise self.state.error(
                "runtime",
                f"TypeError: {type(value).__name__} indices must be integers or slices, not str",
                node,
            )
        try:
            return value[index]
        except (IndexError, KeyError) as exc:
            said = clipped(str(exc), 80)
            raise self.state.error("runtime", f"{type(exc).__name__}: {said}", node) from None
