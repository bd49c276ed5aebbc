"""What a transfer measurement is (Measurement) and the GPU numbers recorded on a machine with
a GPU (bench/transfer_reference.json), readable without torch: the server shows them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

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


def load_reference(path: Path = REFERENCE_PATH) -> dict | None:
    """Recorded GPU numbers, or None when none were recorded (the usual case here)."""
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
