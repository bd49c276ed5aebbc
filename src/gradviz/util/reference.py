"""Reference files: figures measured on a machine with a GPU, recorded as JSON, and shown
(without torch) where the host has none.

One loader reads every such file (load_reference): a file that is not there is None (the
usual case: gradviz does not make numbers up); one that cannot be read, is not JSON, is not
a JSON object or has the wrong schema is a ReferenceFileError naming the file and the
problem. Each kind of file has its ReferenceFormat, kept with its REFERENCE_PATH by its
owner, whose `parse` checks what the file holds (with require_field for typed fields):
gradviz.speed.timing_reference (the Speed page's timings) and gradviz.devices.transfer_reference
(the Devices page's copy costs).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

Parsed = TypeVar("Parsed")


class ReferenceFileError(ValueError):
    """A reference file exists but is not a valid, complete record."""


@dataclass(frozen=True)
class ReferenceFormat(Generic[Parsed]):
    """One kind of reference file: how its contents are checked, and the value its "schema"
    field must have (None: the format names no schema)."""

    parse: Callable[[dict, str], Parsed]  # (the JSON object, the file's name) -> contents
    schema: str | None = None


def load_reference(path: Path | str, fmt: ReferenceFormat[Parsed]) -> Parsed | None:
    """The file at `path` as fmt.parse makes it; None when there is no file. Raises
    ReferenceFileError for a file that is not readable JSON, not an object or of another
    schema; fmt.parse raises it for the rest (a missing or mistyped field, ...).
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON or UTF-8
        raise ReferenceFileError(f"{path.name} is not readable JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ReferenceFileError(f"{path.name}: top level should be an object")
    if fmt.schema is not None and data.get("schema") != fmt.schema:
        raise ReferenceFileError(
            f"{path.name}: schema should be {fmt.schema!r}, got {data.get('schema')!r}"
        )
    return fmt.parse(data, path.name)


def require_field(obj: dict, name: str, kind: type, where: str, *, nullable: bool = False) -> Any:
    """obj[name], checked: present, of `kind` (str: not empty; int: not a bool; float: any
    finite number >= 0, returned as a float), or None when `nullable`. `where` starts the
    ReferenceFileError's message ("ref.json points[3]")."""
    if name not in obj:
        raise ReferenceFileError(f"{where}: missing field {name!r}")
    value = obj[name]
    if value is None and nullable:
        return None
    ok = (
        isinstance(value, int | float) and not isinstance(value, bool)
        if kind is float
        else isinstance(value, kind) and not isinstance(value, bool)
    )
    if not ok:
        raise ReferenceFileError(
            f"{where}: field {name!r} should be {kind.__name__}, got {type(value).__name__}"
        )
    if kind is str and not value.strip():
        raise ReferenceFileError(f"{where}: field {name!r} is empty")
    if kind is not float:
        return value
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        number = math.inf
    if not (math.isfinite(number) and number >= 0):
        raise ReferenceFileError(f"{where}: field {name!r} must be a finite number >= 0")
    return number
