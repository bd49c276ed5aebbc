"""What a transfer measurement is (Measurement) and the GPU numbers recorded on a machine with
a GPU (REFERENCE_PATH, in REFERENCE_FORMAT, read by gradviz.util.reference.load_reference),
readable without torch: the server shows them."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from gradviz.util.reference import ReferenceFileError, ReferenceFormat, require_field

REFERENCE_PATH = Path(__file__).resolve().parents[3] / "bench" / "transfer_reference.json"
RECORD_COMMAND = "python -m gradviz.devices.transfer --record bench/transfer_reference.json --sweep"

# Notes on the CPU rows, shown with them (the measuring is gradviz.devices.transfer's).
CPU_SYNC_NOTE = (
    "on the CPU there is no queue: each row is the same x @ x plus its own small step, so "
    "differences within the spread are noise, not a cost of syncing"
)
CPU_THREADS_NOTE = (
    "timed with one CPU thread: with more, an operation big enough to be split waits for every "
    "thread, and on a busy host one waiting for a core stalls it by milliseconds"
)


@dataclass
class Measurement:
    key: str
    what: str
    device: str
    seconds: float  # median
    nbytes: int | None = None
    note: str = ""
    spread: float | None = None  # interquartile range of the repeats, seconds

    def keep_spread(self, times: list[float]) -> Measurement:
        """Set seconds (the median) and spread (the interquartile range) from the repeats."""
        self.seconds, self.spread = median_and_iqr(times)
        return self

    @property
    def gb_per_s(self) -> float | None:
        if not self.nbytes or self.seconds <= 0:
            return None
        return self.nbytes / self.seconds / 1e9


def median_and_iqr(times: list[float]) -> tuple[float, float]:
    """The median and the interquartile range of repeated times (one time: a spread of 0)."""
    ordered = sorted(times)
    if not ordered:
        raise ValueError("no times")
    if len(ordered) == 1:
        return ordered[0], 0.0
    q1, q2, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return q2, q3 - q1


def recorded_from(data: dict, name: str) -> dict:
    """The recorded numbers, checked as transfer.record writes them (REFERENCE_FORMAT's
    parse): who measured (device, device_name, torch, measured_on) and
    a non-empty list of measurements, each with its key, what, device and seconds (null
    where it could not be measured). Raises ReferenceFileError naming the first problem."""
    for key in ("device", "device_name", "torch", "measured_on"):
        require_field(data, key, str, name)
    measurements = data.get("measurements")
    if not isinstance(measurements, list) or not measurements:
        raise ReferenceFileError(f"{name}: 'measurements' should be a non-empty list")
    for i, m in enumerate(measurements):
        where = f"{name} measurements[{i}]"
        if not isinstance(m, dict):
            raise ReferenceFileError(f"{where}: should be an object")
        for key in ("key", "what", "device"):
            require_field(m, key, str, where)
        require_field(m, "seconds", float, where, nullable=True)
        if "gb_per_s" in m:
            require_field(m, "gb_per_s", float, where, nullable=True)
        if "spread" in m:
            require_field(m, "spread", float, where, nullable=True)
        if not isinstance(m.get("note", ""), str):
            raise ReferenceFileError(f"{where}: field 'note' should be str")
    sweep = data.get("sweep", [])
    if not isinstance(sweep, list):
        raise ReferenceFileError(f"{name}: 'sweep' should be a list")
    for i, row in enumerate(sweep):
        where = f"{name} sweep[{i}]"
        if not isinstance(row, dict):
            raise ReferenceFileError(f"{where}: should be an object")
        for key in ("direction", "memory"):
            require_field(row, key, str, where)
        require_field(row, "nbytes", int, where)
        require_field(row, "seconds", float, where)
        require_field(row, "gb_per_s", float, where, nullable=True)
    return data


# Read with gradviz.util.reference.load_reference(REFERENCE_PATH, REFERENCE_FORMAT); the
# file names no schema.
REFERENCE_FORMAT = ReferenceFormat(recorded_from)
