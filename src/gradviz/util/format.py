"""Numbers for people: byte sizes and durations."""

from __future__ import annotations


def fmt_bytes(n: float) -> str:
    """Human size: 40 GB, 200 MB, 12 KB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
    return f"{int(n)} bytes"


def fmt_seconds(seconds: float) -> str:
    """Human duration with its unit: 2.5 min, 1.234 s, 12.500 ms, 3.2 µs."""
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} µs"
