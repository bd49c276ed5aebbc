"""One layout at a time for each visitor: a second drawing asked by the same visitor while
theirs waits or runs is refused at once, not queued in front of everyone else's."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from gradviz.graph import render

LIMITS = replace(render.SERVER_LIMITS, concurrent=2, wait_seconds=5.0)


@pytest.fixture
def held(monkeypatch):
    """render's `dot` replaced by one that waits until `release` is set; `started` counts
    the layouts running."""
    release = threading.Event()
    started = []

    def fake(cmd, source, fmt, limits):
        started.append(source)
        assert release.wait(10)
        return None, b"<svg/>"

    monkeypatch.setattr(render.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(render, "_run_dot", fake)
    yield release, started
    release.set()


def _draw_in_thread(dot: str, visitor: str, out: list) -> threading.Thread:
    def go():
        try:
            out.append(render.render_bytes(dot, "svg", limits=LIMITS, visitor=visitor))
        except render.RenderUnavailable as exc:
            out.append(exc)

    thread = threading.Thread(target=go)
    thread.start()
    return thread


def _wait_for(check, seconds: float = 5.0) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_a_second_drawing_from_the_same_visitor_is_refused_at_once(held):
    release, started = held
    first: list = []
    thread = _draw_in_thread("digraph { a -> b }", "1.2.3.4|visitor aa", first)
    _wait_for(lambda: len(started) == 1)
    began = time.monotonic()
    with pytest.raises(render.RenderUnavailable, match="one at a time"):
        render.render_bytes(
            "digraph { c -> d }", "svg", limits=LIMITS, visitor="1.2.3.4|visitor aa"
        )
    assert time.monotonic() - began < 1.0  # not queued for a slot
    assert len(started) == 1
    release.set()
    thread.join(10)
    assert first == [b"<svg/>"]
    # not remembered: once theirs is done, the same visitor draws again
    assert (
        render.render_bytes(
            "digraph { c -> d }", "svg", limits=LIMITS, visitor="1.2.3.4|visitor aa"
        )
        == b"<svg/>"
    )


def test_different_visitors_each_get_a_slot(held):
    release, started = held
    out: list = []
    threads = [
        _draw_in_thread(f"digraph {{ a{k} -> b }}", f"1.2.3.4|visitor {k}", out) for k in "ab"
    ]
    _wait_for(lambda: len(started) == 2)  # both running at once: the two slots
    release.set()
    for thread in threads:
        thread.join(10)
    assert out == [b"<svg/>", b"<svg/>"]


def test_a_visitor_waiting_for_a_slot_holds_their_turn(held, monkeypatch):
    """While a visitor's drawing waits behind others for a slot, their next one is refused
    too: waiting counts as theirs."""
    release, started = held
    one = replace(LIMITS, concurrent=1)
    out: list = []

    def draw(dot, visitor):
        try:
            out.append(render.render_bytes(dot, "svg", limits=one, visitor=visitor))
        except render.RenderUnavailable as exc:
            out.append(exc)

    running = threading.Thread(target=draw, args=("digraph { a -> b }", "other"))
    running.start()
    _wait_for(lambda: len(started) == 1)
    waiting = threading.Thread(target=draw, args=("digraph { c -> d }", "me"))
    waiting.start()
    time.sleep(0.2)  # "me" waits for the one slot
    with pytest.raises(render.RenderUnavailable, match="one at a time"):
        render.render_bytes("digraph { e -> f }", "svg", limits=one, visitor="me")
    release.set()
    running.join(10)
    waiting.join(10)
    assert out == [b"<svg/>", b"<svg/>"]


def test_without_a_visitor_nothing_is_counted(held):
    release, started = held
    out: list = []
    threads = [_draw_in_thread(f"digraph {{ a{k} -> b }}", "", out) for k in "ab"]
    _wait_for(lambda: len(started) == 2)
    release.set()
    for thread in threads:
        thread.join(10)
    assert out == [b"<svg/>", b"<svg/>"]
