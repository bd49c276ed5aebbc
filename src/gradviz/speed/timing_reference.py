"""The GPU reference file: figures measured on a real GPU (`python bench/speed_gpu.py`),
shown where the host has none. Its format (`REFERENCE_FORMAT`) is read with
gradviz.util.reference.load_reference(REFERENCE_PATH, REFERENCE_FORMAT).

Never imports torch: the Streamlit server reads the file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gradviz.speed.timing import Comparison, NaiveTiming, Point, Timing
from gradviz.speed.workloads import validate_job
from gradviz.util.reference import ReferenceFileError, ReferenceFormat, require_field

REFERENCE_SCHEMA = "gradviz.gpu_speed_reference/1"
REFERENCE_COMMAND = "python bench/speed_gpu.py"
REFERENCE_PATH = Path(__file__).resolve().parents[3] / "docs" / "gpu_speed_reference.json"


@dataclass(frozen=True)
class Reference:
    device: str
    torch: str
    cuda: str
    date: str
    command: str
    points: tuple[Point, ...]
    comparisons: tuple[Comparison, ...] = ()
    note: str = ""


_POINT_FIELDS = {
    "workload": str,
    "device": str,
    "dtype": str,
    "size": int,
    "iterations": int,
    "median_s": float,
    "iqr_s": float,
    "repeats": int,
}
_NAIVE_FIELDS = {"total_s": float, "setup_s": float, "launch_s": float, "pending_s": float}


def _point_from(obj: Any, where: str) -> Point:
    if not isinstance(obj, dict):
        raise ReferenceFileError(f"{where}: should be an object")
    values = {name: require_field(obj, name, kind, where) for name, kind in _POINT_FIELDS.items()}
    point = Point(**values)
    try:
        validate_job(replace(point.job, device="cpu"))  # the device may be absent here
    except ValueError as exc:
        raise ReferenceFileError(f"{where}: {exc}") from None
    if point.median_s <= 0:
        raise ReferenceFileError(f"{where}: median_s must be positive")
    return point


def reference_from(data: dict, name: str) -> Reference:
    """The GPU reference file's contents, checked (REFERENCE_FORMAT's parse): raises
    ReferenceFileError naming the first problem (missing or mistyped field, unknown workload,
    no GPU points). `name`: the file's."""
    head = {k: require_field(data, k, str, name) for k in ("device", "torch", "cuda", "date")}
    command = require_field(data, "command", str, name)
    if not isinstance(data.get("points"), list) or not data["points"]:
        raise ReferenceFileError(f"{name}: 'points' should be a non-empty list")
    points = tuple(_point_from(p, f"{name} points[{i}]") for i, p in enumerate(data["points"]))
    if not any(p.device.startswith("cuda") for p in points):
        raise ReferenceFileError(f"{name}: no point was measured on a cuda device")
    if not isinstance(data.get("comparisons", []), list):
        raise ReferenceFileError(f"{name}: 'comparisons' should be a list")
    comparisons = []
    for i, c in enumerate(data.get("comparisons", [])):
        where = f"{name} comparisons[{i}]"
        point = _point_from(c, where)
        naive_obj = c.get("naive")
        if not isinstance(naive_obj, dict):
            raise ReferenceFileError(f"{where}: missing object 'naive'")
        naive = NaiveTiming(
            **{k: require_field(naive_obj, k, t, where) for k, t in _NAIVE_FIELDS.items()}
        )
        timing = Timing(point.median_s, point.iqr_s, (), 0, 0, False)
        comparisons.append(Comparison(point.job, naive, timing))
    note = data.get("note", "")
    return Reference(
        command=command,
        points=points,
        comparisons=tuple(comparisons),
        note=note if isinstance(note, str) else "",
        **head,
    )


# Read with gradviz.util.reference.load_reference(REFERENCE_PATH, REFERENCE_FORMAT).
REFERENCE_FORMAT = ReferenceFormat(reference_from, REFERENCE_SCHEMA)
