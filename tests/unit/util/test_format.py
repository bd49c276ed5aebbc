"""util.format: the one place sizes and durations are written for people."""

from __future__ import annotations

import pytest

from gradviz.util.format import SCALES, fmt_bytes, fmt_eta, fmt_in, fmt_seconds


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 bytes"),
        (999, "999 bytes"),
        (999.9, "999 bytes"),
        (1_000, "1.0 KB"),
        (1_500, "1.5 KB"),
        (9_949, "9.9 KB"),
        (9_950, "10 KB"),  # not "10.0 KB": two figures from 10 on
        (999_499, "999 KB"),
        (999_500, "1.0 MB"),  # not "1000 KB": the next unit once it would show 1000
        (999_999, "1.0 MB"),
        (200_000_000, "200 MB"),
        (4.2e9, "4.2 GB"),
        (40e12, "40 TB"),
        (1e16, "10000 TB"),  # the largest unit has no ceiling
        (-1_500, "-1.5 KB"),
    ],
)
def test_bytes(n, text):
    assert fmt_bytes(n) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (2**20, "1.0 MB"),  # a MiB is 1,048,576 bytes: 1.0 MB, as 10^6 bytes are
        (60 * 2**20, "63 MB"),
        (512 * 2**20, "537 MB"),
        (25 * 2**20, "26 MB"),
        (2**30, "1.1 GB"),
    ],
)
def test_binary_sizes_are_written_in_decimal_megabytes(n, text):
    """MB means 10^6 bytes everywhere: a size counted in MiB is not labelled MB unchanged
    (graph.render wrote 60 MiB as "60 MB")."""
    assert fmt_bytes(n) == text
    assert SCALES["MB"] == 10**6 and SCALES["KB"] == 10**3 and SCALES["GB"] == 10**9


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0.0 µs"),
        (3.2e-6, "3.2 µs"),
        (0.0125, "12.500 ms"),
        (1.2345, "1.234 s"),
        (119.0, "119.000 s"),
        (120.0, "2.0 min"),
        (150.0, "2.5 min"),
    ],
)
def test_seconds(seconds, text):
    assert fmt_seconds(seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "?"),
        (0.4, "0 s"),
        (45.4, "45 s"),
        (119.4, "119 s"),
        (120, "2.0 min"),
        (150, "2.5 min"),
    ],
)
def test_eta(seconds, text):
    assert fmt_eta(seconds) == text


@pytest.mark.parametrize(
    ("args", "kwargs", "text"),
    [
        ((12_345_678, "MB"), {}, "12.3 MB"),
        ((12_345_678, "MB"), {"width": 6}, "  12.3 MB"),
        ((20e6, "MB"), {"decimals": 0}, "20 MB"),
        ((1.5e-5, "µs"), {}, "15.0 µs"),
        ((1.2345e-2, "µs"), {"grouping": True}, "12,345.0 µs"),
        ((1.234e-4, "ms"), {"decimals": 4, "width": 10}, "    0.1234 ms"),
        ((5.25, "s"), {"width": 5}, "  5.2 s"),
        ((3.0, "s"), {"decimals": 4}, "3.0000 s"),
    ],
)
def test_in_one_unit(args, kwargs, text):
    assert fmt_in(*args, **kwargs) == text


def test_in_one_unit_writes_what_the_inline_figures_wrote():
    """Sub-second units multiply by a whole number, as the figures fmt_in replaced did
    (seconds * 1e6), so the same float gives the same text."""
    for seconds in (1.0000005e-5, 2.5e-7, 0.0125, 1.23456785e-3, 3.3e-6):
        assert fmt_in(seconds, "µs", grouping=True) == f"{seconds * 1e6:,.1f} µs"
        assert fmt_in(seconds, "ms", 4, 10) == f"{seconds * 1e3:10.4f} ms"
    for n in (170_498_071, 12_345_678, 999_950):
        assert fmt_in(n, "MB") == f"{n / 1e6:.1f} MB"


def test_an_unknown_unit_is_refused():
    with pytest.raises(KeyError):
        fmt_in(1.0, "MiB")
