"""The landing page's stored result (gradviz.services.landing): the same as a real isolated
run of the lesson (a stale file fails here), served only for exactly that program and
options, and never again once a fresh run differs."""

import dataclasses
import pickle

import pytest

from gradviz.program.presets import PRESETS
from gradviz.program.results.trace import RunOptions
from gradviz.services import landing
from gradviz.workers.pool import Pool, SandboxLimits

PROBE = landing.gpu_device_present  # the fixture replaces it for the other tests


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    monkeypatch.setattr(landing, "_state", {"loaded": None, "refuted": False, "warming": None})
    monkeypatch.setattr(landing, "gpu_device_present", lambda: False)
    monkeypatch.delenv("GRADVIZ_PUBLIC", raising=False)
    monkeypatch.delenv("GRADVIZ_LANDING", raising=False)


def stored_entries():
    return pickle.loads(landing.LANDING_FILE.read_bytes())


def test_the_stored_result_equals_a_fresh_isolated_run():
    """Fails when the file is stale: rewrite it with `python scripts/landing_result.py`."""
    entries = stored_entries()
    assert [o for o, _ in entries] == [
        landing.landing_options(False),
        landing.landing_options(True),
    ]
    with Pool(SandboxLimits(workers=1)) as pool:
        fresh = pickle.loads(landing.make(pool))
    for (options, kept), (_, new) in zip(entries, fresh, strict=True):
        assert kept.error is None and kept.graph is not None and kept.graph.nodes
        assert landing.comparable(kept) == landing.comparable(new), options.limits


def test_stored_only_for_the_lesson_with_the_first_options():
    lesson = PRESETS[0].source
    trace = landing.stored(lesson, RunOptions())
    assert trace is not None and trace.source == lesson
    assert trace is not landing.stored(lesson, RunOptions())  # each caller its own copy
    assert landing.stored(lesson + "z = y * 2\n", RunOptions()) is None
    assert landing.stored(lesson, RunOptions(backward="y")) is None
    assert landing.stored(lesson, RunOptions(retain_intermediate=True)) is None
    assert landing.stored(lesson, RunOptions(device_overrides={"x": "cuda"})) is None
    assert landing.stored(PRESETS[1].source, RunOptions()) is None


def test_public_mode_gets_the_public_run(monkeypatch):
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    trace = landing.stored(PRESETS[0].source, RunOptions())
    public = dict((o.limits, t) for o, t in stored_entries())[landing.landing_options(True).limits]
    assert trace is not None and landing.comparable(trace) == landing.comparable(public)


def test_not_served_on_a_host_with_a_gpu_or_when_turned_off(monkeypatch, tmp_path):
    monkeypatch.setattr(landing, "gpu_device_present", lambda: True)
    assert landing.stored(PRESETS[0].source, RunOptions()) is None
    monkeypatch.setattr(landing, "gpu_device_present", lambda: False)
    monkeypatch.setenv("GRADVIZ_LANDING", "off")
    assert landing.stored(PRESETS[0].source, RunOptions()) is None


def test_gpu_device_present_reads_device_files(tmp_path):
    assert not PROBE((str(tmp_path / "nvidia[0-9]*"),))
    (tmp_path / "nvidia0").touch()
    assert PROBE((str(tmp_path / "nvidia[0-9]*"),))


def test_a_fresh_run_that_differs_stops_the_stored_result():
    options = RunOptions()
    kept = landing.stored(PRESETS[0].source, options)
    same = dataclasses.replace(kept, stats=dataclasses.replace(kept.stats, seconds=9.0))
    assert landing.verify(same, landing.landing_options(False))
    assert landing.stored(PRESETS[0].source, options) is not None
    other = dataclasses.replace(kept, stdout=["something else"])
    assert not landing.verify(other, landing.landing_options(False))
    assert landing.stored(PRESETS[0].source, options) is None


def test_comparable_renumbers_torchviz_ids_only():
    kept = landing.stored(PRESETS[0].source, RunOptions())
    assert "MeanBackward0" in kept.classic_dot and "n0" not in kept.classic_dot
    assert "n0" in landing.comparable(kept).classic_dot
    other = dataclasses.replace(
        kept, classic_dot=kept.classic_dot.replace("MeanBackward0", "SumBackward0")
    )
    assert landing.comparable(other) != landing.comparable(kept)
