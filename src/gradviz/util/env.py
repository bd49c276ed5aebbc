"""Numbers an operator sets in the environment (GRADVIZ_TRAINING_MEMORY, ...)."""

from __future__ import annotations

import math
import os


def positive_number(name: str, default: float) -> float:
    """The environment variable `name` as a positive finite number; `default` when it is
    unset, not a number, infinite, NaN, zero or negative."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default
