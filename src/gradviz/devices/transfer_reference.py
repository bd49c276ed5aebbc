"""What a transfer measurement is (Measurement) and the GPU numbers recorded on a machine with
a GPU (REFERENCE_PATH, in REFERENCE_FORMAT, read by gradviz.util.reference.load_reference),
readable without torch: the server shows them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gradviz.util.reference import ReferenceFileError, ReferenceFormat, require_field

REFERENCE_PATH = Path(__file__).resolve().parents[3] / "bench" / "transfer_reference.json"
RECORD_COMMAND = "python -m gradviz.devices.transfer --record bench/transfer_reference.json"


@dataclass
class Measurement:
    key: str
    what: str
    device: str
    seconds: float  # median
    nbytes: int | None = None
    note: str = ""

    @property
    def gb_per_s(self) -> float | None:
        if not self.nbytes or self.seconds <= 0:
            return None
        return self.nbytes / self.seconds / 1e9


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
        if not isinstance(m.get("note", ""), str):
            raise ReferenceFileError(f"{where}: field 'note' should be str")
    return data


# Read with gradviz.util.reference.load_reference(REFERENCE_PATH, REFERENCE_FORMAT); the
# file names no schema.
REFERENCE_FORMAT = ReferenceFormat(recorded_from)
