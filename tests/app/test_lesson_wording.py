"""What users read calls the lesson "the lesson", never "the seed" (the team's name for the
lesson files): the Speed and Autograd pages as rendered, the presets, the Speed page's
progress labels, and the command line's help and output. Random-number seeds keep their
name: `--seed`, "random seed", `manual_seed`."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from google.protobuf.message import Message
from page_tabs import open_tab
from streamlit.testing.v1 import AppTest

from gradviz.cli import main as cli_main
from gradviz.program.presets import PRESETS
from gradviz.speed import gpus, measure, timing, timing_reference, workloads
from gradviz.ui.autograd.tabs import TABS
from tests import markdown_tables

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
FIXTURE = ROOT / "tests" / "fixtures" / "gpu_speed_reference.TEST_FIXTURE.json"

SEED = re.compile(r"\bseeds?\b", re.IGNORECASE)  # "seed", "seeds", "seed's", "Seed loop"
# a random seed, or `seed` named as a function (np.random.seed in "What can I write?")
RANDOM_SEED = re.compile(r"--seed(?:[ =]SEED)?\b|\brandom seeds?\b|`seed`", re.IGNORECASE)


def lesson_called_seed(text: str) -> list[str]:
    """Each place `text` says "seed" other than for a random-number seed, with its context."""
    text = RANDOM_SEED.sub("", text)
    return [text[max(m.start() - 40, 0) : m.end() + 40] for m in SEED.finditer(text)]


def _strings(value) -> list[str]:
    """Every string in a protobuf message: its fields, nested messages, lists and maps."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Message):
        return [s for _field, v in value.ListFields() for s in _strings(v)]
    if isinstance(value, bytes | int | float):
        return []
    try:
        items = list(value.items())  # a map field: (key, value) pairs
    except AttributeError:
        items = list(value)  # a repeated field, or a pair
    return [s for v in items for s in _strings(v)]


def page_text(at: AppTest) -> str:
    """All text the page sends the browser: labels, help, options, markdown, tables, charts."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.extend(_strings(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    walk(at.sidebar)
    return "\n".join(out)


def test_the_check_finds_the_lesson_called_seed_and_spares_random_seeds():
    assert lesson_called_seed("1. The seed's timing, and the correct one")
    assert lesson_called_seed("| naive (seed) |")
    assert lesson_called_seed("Seed loop: result = result + tensor1 * tensor2")
    assert lesson_called_seed("the seeds' workloads")
    assert not lesson_called_seed(
        "usage: train [--seed SEED] [--seed=SEED]\n  --seed SEED\n"
        "torch.manual_seed(0), MANUAL_SEED, a random seed, two random seeds"
    )


def test_speed_page_says_lesson(tmp_path, monkeypatch):
    path = tmp_path / "ref.json"  # a reference file, so its comparison table is shown too
    shutil.copy(FIXTURE, path)
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", path)

    def script() -> None:
        from gradviz.ui.speed import page

        page.page()

    at = AppTest.from_function(script, default_timeout=120).run()
    assert not at.exception
    at.radio(key="speed_workload").set_value("elementwise").run()
    assert not at.exception
    text = page_text(at)
    for shown in (
        "1. The lesson's timing, and the correct one",
        "Use the lesson's full size",
        "The lesson's loop: result = result + tensor1 * tensor2",
        "The lesson used 100,000,000 elements per tensor",
    ):
        assert shown in text  # the scan sees the page
    assert markdown_tables.find((m.value for m in at.markdown), "naive (lesson)")  # the reference's
    assert lesson_called_seed(text) == []


def test_autograd_page_says_lesson():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    text = page_text(at)
    for label in TABS[1:]:  # the tabs beside the graph are made only while open
        text += "\n" + page_text(open_tab(at, label))
    assert "The lesson: y = mean((x + 2)² + 3)" in text  # the preset's title, as an option
    assert "The dynamic graph from the lesson" in text  # its caption: the landing preset
    assert lesson_called_seed(text) == []


def test_presets_and_workloads_say_lesson():
    assert "lesson" in {p.key for p in PRESETS}
    for preset in PRESETS:
        assert lesson_called_seed(f"{preset.key}\n{preset.title}\n{preset.about}") == []
    for workload in workloads.WORKLOADS.values():
        assert lesson_called_seed(workload.title) == []
    assert lesson_called_seed("\n".join(f"{g.label} {g.note}" for g in gpus.GPUS)) == []


def test_speed_progress_labels_say_lesson():
    job = workloads.TimingJob("elementwise", 1000, "cpu", "float32", 1)
    events = [*measure.comparison_events(job, repeats=1), *measure.sweep([job], repeats=1)]
    labels = [e.label for e in events if isinstance(e, timing.Progress)]
    assert "naive run, timed the lesson's way" in labels
    assert lesson_called_seed("\n".join(labels)) == []


def _commands() -> list[str]:
    return [name.rsplit(".", 1)[1] for name in cli_main.COMMAND_MODULES]


@pytest.mark.parametrize("argv", [[]] + [[c] for c in _commands()], ids=["gradviz", *_commands()])
def test_cli_help_says_lesson(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli_main.main([*argv, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "usage:" in out
    assert lesson_called_seed(out) == []


def test_cli_speed_help_and_output_say_lesson(capsys):
    with pytest.raises(SystemExit):
        cli_main.main(["speed", "--help"])
    assert "the lesson's workloads" in capsys.readouterr().out
    argv = ["speed", "--size", "1000", "--iterations", "1", "--repeats", "1"]
    assert cli_main.main(argv) == 0
    out = capsys.readouterr().out
    assert "naive (lesson):" in out
    assert lesson_called_seed(out) == []
