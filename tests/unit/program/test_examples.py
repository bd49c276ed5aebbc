"""examples/*.py are the Autograd page's presets as files for the command line: the same
text, so a lecturer who copies one from the page and one from the repository gets the same
graph (each file is its preset's source under one comment line saying what it is)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradviz.program.presets import PRESETS_BY_KEY

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
FILES = sorted(p for p in EXAMPLES.glob("*.py"))


def code_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_every_example_is_a_preset():
    assert len(FILES) >= 8
    assert {p.stem for p in FILES} <= set(PRESETS_BY_KEY)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_example_file_is_its_preset(path):
    preset = PRESETS_BY_KEY[path.stem]
    text = path.read_text(encoding="utf-8")
    head, _, body = text.partition("\n")
    assert head.startswith("# "), "the first line says what the example is"
    if path.stem == "lesson":  # the file keeps the lesson's numbers in its comment instead
        assert code_lines(body) == code_lines(preset.source)
    else:
        assert body == preset.source
    named = re.search(r"--backward (\w+)", head)
    assert (named.group(1) if named else None) == (
        preset.backward if path.stem != "lesson" else None
    ), "the comment names the preset's backward target"
