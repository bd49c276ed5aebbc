"""Numbers for people: byte sizes and durations, the one place gradviz writes them.

Sizes are decimal (SI), as the app's limits, GB/s and the makers' memory figures are:
KB = 10^3, MB = 10^6, GB = 10^9 and TB = 10^12 bytes. A size of 2^20 bytes is 1.0 MB here,
never "1 MB" of 1,048,576 bytes; code that counts in binary units (a 64 MiB buffer, ulimit's
KiB) names them MiB and KiB and prints them through these functions as MB.

- `fmt_bytes(n)`: a size in the unit that suits it (12 bytes, 1.5 KB, 200 MB, 4.2 GB).
- `fmt_seconds(s)`: a duration in the unit that suits it (3.2 µs, 12.500 ms, 1.234 s, 2.5 min).
- `fmt_eta(s)`: time left, whole seconds up to two minutes (45 s, 2.5 min; "?" unknown).
- `fmt_in(x, unit)`: bytes or seconds in one given unit, for figures meant to be compared
  in a column or a progress line whose unit must not change (12.3 MB, 10.0 µs, 0.1234 ms).
"""

from __future__ import annotations

# Each unit fmt_in writes, and how many bytes or seconds one of it is.
SCALES = {
    "bytes": 1.0,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "min": 60.0,
}
BYTE_UNITS = ("KB", "MB", "GB", "TB")  # fmt_bytes' units above bytes, smallest first


def fmt_in(
    value: float, unit: str, decimals: int = 1, width: int = 0, grouping: bool = False
) -> str:
    """`value` (bytes or seconds) in `unit` (a key of SCALES), with `decimals` places, padded to
    `width` characters before the unit, with thousands separators when `grouping`:
    fmt_in(12_345_678, "MB") == "12.3 MB", fmt_in(1e-5, "µs", grouping=True) == "10.0 µs"."""
    scale = SCALES[unit]
    # under one byte or second: multiply by the whole number per unit (x * 1e6, exact as the
    # figure is written, where x / 1e-6 is not always)
    scaled = value / scale if scale >= 1 else value * round(1 / scale)
    spec = f"{width or ''}{',' if grouping else ''}.{decimals}f"
    return f"{scaled:{spec}} {unit}"


def fmt_bytes(n: float) -> str:
    """Human size: 40 GB, 200 MB, 1.5 KB, 12 bytes. Under 10 of a unit with one decimal; the
    unit is the largest that shows at least 1, and a figure that would round to 1000 of one
    unit is written in the next (999,999 bytes: 1.0 MB, not 1000 KB)."""
    if n < 0:
        return "-" + fmt_bytes(-n)
    if n < 1e3:
        return f"{int(n)} bytes"
    for unit in BYTE_UNITS:
        value = n / SCALES[unit]
        if value < 9.95:
            return f"{value:.1f} {unit}"
        if value < 999.5 or unit == BYTE_UNITS[-1]:
            return f"{value:.0f} {unit}"
    raise AssertionError("unreachable: the last unit always returns")


def fmt_seconds(seconds: float) -> str:
    """Human duration with its unit: 2.5 min, 1.234 s, 12.500 ms, 3.2 µs."""
    if seconds >= 120:
        return fmt_in(seconds, "min")
    if seconds >= 1:
        return fmt_in(seconds, "s", decimals=3)
    if seconds >= 1e-3:
        return fmt_in(seconds, "ms", decimals=3)
    return fmt_in(seconds, "µs")


def fmt_eta(seconds: float | None) -> str:
    """Time left: whole seconds under two minutes (45 s), minutes after (2.5 min); "?" when
    not known yet."""
    if seconds is None:
        return "?"
    return fmt_in(seconds, "s", decimals=0) if seconds < 120 else fmt_in(seconds, "min")
