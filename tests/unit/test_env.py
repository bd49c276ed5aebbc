"""util.env: the one reader of numbers an operator sets in the environment."""

from __future__ import annotations

import pytest

from gradviz.util.env import positive_number


def test_unset_gives_the_default(monkeypatch):
    monkeypatch.delenv("GRADVIZ_TEST_NUMBER", raising=False)
    assert positive_number("GRADVIZ_TEST_NUMBER", 7.5) == 7.5


@pytest.mark.parametrize(("text", "value"), [("3", 3.0), ("0.25", 0.25), ("5e8", 5e8)])
def test_a_positive_number_is_read(monkeypatch, text, value):
    monkeypatch.setenv("GRADVIZ_TEST_NUMBER", text)
    assert positive_number("GRADVIZ_TEST_NUMBER", 7.5) == value


@pytest.mark.parametrize("text", ["lots", "", "0", "-1", "inf", "nan"])
def test_anything_else_gives_the_default(monkeypatch, text):
    monkeypatch.setenv("GRADVIZ_TEST_NUMBER", text)
    assert positive_number("GRADVIZ_TEST_NUMBER", 7.5) == 7.5
