"""util.format: the one place sizes and durations are written for people."""

from __future__ import annotations

import pytest

from gradviz.util.format import fmt_bytes, fmt_seconds


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 bytes"),
        (999, "999 bytes"),
        (1_500, "1.5 KB"),
        (200_000_000, "200 MB"),
        (4.2e9, "4.2 GB"),
        (40e12, "40 TB"),
    ],
)
def test_bytes(n, text):
    assert fmt_bytes(n) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (3.2e-6, "3.2 µs"),
        (0.0125, "12.500 ms"),
        (1.2345, "1.234 s"),
        (119.0, "119.000 s"),
        (150.0, "2.5 min"),
    ],
)
def test_seconds(seconds, text):
    assert fmt_seconds(seconds) == text
