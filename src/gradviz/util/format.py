"""Numbers for people: byte sizes."""

from __future__ import annotations


def fmt_bytes(n: float) -> str:
    """Human size: 40 GB, 200 MB, 12 KB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
    return f"{int(n)} bytes"
