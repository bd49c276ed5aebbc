"""Graphviz layout in the server is bounded: graph size, memory, CPU, pixels, concurrency.

Issue items 1 and 4: a 9 KB share link made `dot` use 2.9 GB for a 40 MB PNG, and a dense
3.7 KB one cost 60 s of CPU on every rerun of the Export tab. Synthetic DOT stands in for
those programs' graphs (same node and edge counts), so these tests need no torch.
"""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from gradviz.graph import render

needs_dot = pytest.mark.skipif(not render.dot_available(), reason="Graphviz `dot` not installed")
REAL_RUN = subprocess.run


@pytest.fixture(autouse=True)
def _fresh_memo():
    render.forget_failures()
    yield
    render.forget_failures()


def synthetic(nodes: int, edges: int, tag: str = "") -> str:
    """A DAG in the page's record style: edges go from node i to one of the next 20."""
    out = ["digraph gradviz {", "  graph [splines=line];", "  node [shape=Mrecord];"]
    out += [f'  "n{i}" [label="{{t{i}{tag} (3,)|{{data 1|grad 2}}}}"];' for i in range(nodes)]
    for k in range(edges):
        a = (k * 7919) % (nodes - 1)
        b = min(nodes - 1, a + 1 + k % 20)
        out.append(f'  "n{a}" -> "n{b}";')
    out.append("}")
    return "\n".join(out) + "\n"


def wide(nodes: int, tag: str = "") -> str:
    """One rank of `nodes` boxes: very wide at a high dpi, cheap to lay out."""
    body = "\n".join(f'  "w{i}" [label="tensor {i}{tag}" shape=box];' for i in range(nodes))
    return "digraph gradviz {\n" + body + "\n}\n"


class Launches:
    """subprocess.run stand-in that counts `dot` launches (others pass through)."""

    def __init__(self, fake=None):
        self.count = 0
        self.fake = fake

    def __call__(self, cmd, *args, **kwargs):
        if not any(str(part).endswith("dot") for part in cmd):
            return REAL_RUN(cmd, *args, **kwargs)
        self.count += 1
        if self.fake is not None:
            return self.fake(cmd, *args, **kwargs)
        return REAL_RUN(cmd, *args, **kwargs)


@needs_dot
def test_graph_over_the_ceiling_is_refused_at_once_without_dot(monkeypatch):
    def refuse(cmd, *args, **kwargs):
        raise AssertionError("dot was started for a graph over the ceiling")

    launches = Launches(refuse)
    monkeypatch.setattr(render.subprocess, "run", launches)
    dense = synthetic(752, 13_751)  # issue item 4: 60 s of CPU per rerun
    assert render.graph_size(dense) == (752, 13_751)
    for fmt in ("svg", "png", "pdf"):
        start = time.monotonic()
        with pytest.raises(render.RenderUnavailable) as info:
            render.render_bytes(dense, fmt)
        assert time.monotonic() - start < 1.0
        message = str(info.value)
        assert "13,751 edges" in message and "limit" in message and "Export DOT" in message
    assert launches.count == 0
    assert render.render_bytes(dense, "dot") == dense.encode()  # DOT export still works


def test_graph_size_ignores_arrows_and_brackets_inside_labels():
    dot = 'digraph { "a" [label="x -> y [z]"]; "b" [label="->->"]; "a" -> "b"; }'
    assert render.graph_size(dot) == (2, 1)
    assert render.graph_size(dot.replace("; ", ";\n")) == (2, 1)


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@needs_dot
@pytest.mark.parametrize("extra", ["", '  graph [dpi=3000 size="500,500"];\n'])
def test_png_of_a_big_allowed_graph_stays_within_the_pixel_bound(extra):
    """Issue item 1: the old code made a 23279x32767 PNG; now it is scaled down to fit,
    even when the DOT asks for a dpi or size of its own."""
    dot = wide(400, tag=str(len(extra))).replace(
        "digraph gradviz {\n", "digraph gradviz {\n" + extra
    )
    limits = render.server_limits()
    width, height = png_size(render.render_bytes(dot, "png", scale=4.0))
    assert width <= limits.max_side and height <= limits.max_side
    assert width > 1000  # scaled down, not refused or empty


@needs_dot
def test_png_keeps_a_smaller_size_the_source_sets():
    """torchviz's classic DOT asks for at most 12x12 inches: still so at scale 2 (192 dpi)."""
    dot = wide(100, "classic").replace(
        "digraph gradviz {\n", 'digraph gradviz {\n  graph [size="12,12"];\n'
    )
    width, height = png_size(render.render_bytes(dot, "png", scale=2.0))
    assert width <= 12 * 192 and height <= 12 * 192


@needs_dot
def test_dot_over_the_memory_limit_is_stopped_with_a_clear_message():
    limits = render.RenderLimits(memory_bytes=60 * 1024 * 1024, max_side=30000)
    start = time.monotonic()
    with pytest.raises(render.RenderUnavailable) as info:
        render.render_bytes(wide(300, "mem"), "png", scale=4.0, limits=limits)
    assert time.monotonic() - start < 10
    # 60 MiB is 62,914,560 bytes: 63 MB (10^6 bytes), as every size the app writes
    assert "more than 63 MB of memory" in str(info.value)
    assert "Export DOT" in str(info.value)


@needs_dot
def test_dot_over_the_cpu_limit_is_stopped():
    limits = render.RenderLimits(cpu_seconds=1, wall_seconds=20)
    start = time.monotonic()
    with pytest.raises(render.RenderUnavailable) as info:
        render.render_bytes(synthetic(1500, 3000, "cpu"), "svg", limits=limits)
    assert time.monotonic() - start < 8
    assert "CPU time" in str(info.value)


@needs_dot
def test_a_failing_layout_is_not_run_again(monkeypatch):
    launches = Launches()
    monkeypatch.setattr(render.subprocess, "run", launches)
    for _ in range(3):
        with pytest.raises(render.RenderUnavailable, match="could not draw"):
            render.render_bytes("digraph { this is not dot ", "svg")
    assert launches.count == 1


@needs_dot
def test_sizes_in_the_refusals_are_megabytes_of_a_million_bytes(monkeypatch):
    """The output and memory limits are written by util.format.fmt_bytes: 25 MiB of output
    is 26 MB, not "25 MB" (a MiB labelled MB), and a limit under 1 MB is not "0 MB"."""

    def output_of(size):
        return lambda cmd, *a, **k: subprocess.CompletedProcess(cmd, 0, b"x" * size, b"")

    monkeypatch.setattr(render.subprocess, "run", Launches(output_of(30 * 2**20)))
    with pytest.raises(render.RenderUnavailable) as info:
        render.render_bytes(synthetic(5, 4, "big"), "svg", limits=render.RenderLimits())
    assert "The SVG of this graph is 31 MB, more than the 26 MB allowed here" in str(info.value)

    monkeypatch.setattr(render.subprocess, "run", Launches(output_of(2_000)))
    limits = render.RenderLimits(max_output_bytes=1_500)
    with pytest.raises(render.RenderUnavailable) as info:
        render.render_bytes(synthetic(5, 4, "small"), "svg", limits=limits)
    assert "is 2.0 KB, more than the 1.5 KB allowed" in str(info.value)

    def out_of_memory(cmd, *a, **k):
        return subprocess.CompletedProcess(cmd, 1, b"", b"dot: out of memory")

    monkeypatch.setattr(render.subprocess, "run", Launches(out_of_memory))
    limits = render.RenderLimits(memory_bytes=512 * 2**20)
    with pytest.raises(render.RenderUnavailable) as info:
        render.render_bytes(synthetic(5, 4, "memory"), "svg", limits=limits)
    assert "Graphviz needed more than 537 MB of memory" in str(info.value)


@needs_dot
def test_a_timed_out_layout_is_not_run_again(monkeypatch):
    def slow(cmd, *args, **kwargs):
        raise subprocess.TimeoutExpired(cmd, kwargs.get("timeout"))

    launches = Launches(slow)
    monkeypatch.setattr(render.subprocess, "run", launches)
    dot = synthetic(50, 80, "slow")
    for _ in range(3):
        with pytest.raises(render.RenderUnavailable, match="longer than"):
            render.render_bytes(dot, "svg")
    assert launches.count == 1


@needs_dot
def test_concurrent_layouts_are_capped(monkeypatch):
    release = threading.Event()
    running = []
    peak = []

    def held(cmd, *args, **kwargs):
        running.append(1)
        peak.append(len(running))
        release.wait(10)
        running.pop()
        return REAL_RUN(cmd, *args, **kwargs)

    monkeypatch.setattr(render.subprocess, "run", Launches(held))
    limits = render.RenderLimits(concurrent=1, wait_seconds=0.3)
    first = threading.Thread(
        target=render.render_bytes, args=(synthetic(20, 30, "a"), "svg"), kwargs={"limits": limits}
    )
    first.start()
    while not running:
        time.sleep(0.01)
    start = time.monotonic()
    with pytest.raises(render.RenderUnavailable, match="try again"):
        render.render_bytes(synthetic(20, 30, "b"), "svg", limits=limits)
    assert time.monotonic() - start < 2
    release.set()
    first.join(10)
    assert max(peak) == 1
    # "busy" is not remembered: once the slot is free, the same graph is drawn.
    assert b"<svg" in render.render_bytes(synthetic(20, 30, "b"), "svg", limits=limits)


def test_cli_limits_are_looser_than_the_servers():
    server, cli = render.SERVER_LIMITS, render.CLI_LIMITS
    assert cli.max_nodes["svg"] > server.max_nodes["svg"]
    assert cli.memory_bytes > server.memory_bytes and cli.concurrent == 0
    assert render.PUBLIC_LIMITS.memory_bytes < server.memory_bytes


def test_public_requests_wait_out_one_whole_layout_before_giving_up():
    """One dot at a time on a public host: a layout holding the slot for its whole wall time
    must not fail everyone queued behind it (a class of 30 submitting at once)."""
    public = render.PUBLIC_LIMITS
    assert public.concurrent == 1
    assert public.wait_seconds > public.wall_seconds


@needs_dot
def test_dot_gets_its_limits_from_ulimit_not_a_forking_preexec_fn(monkeypatch):
    """The limits hold in the started process, and Python is not made to fork() the whole
    server for them (a preexec_fn rules out vfork: ~100 ms a drawing, bench/class_load.py)."""
    show = ["/bin/sh", "-c", 'echo "$(ulimit -Sv) $(ulimit -St) $(ulimit -Ht) $(ulimit -c)"']
    out = subprocess.run(render.limited_command(show, 384 * 1024 * 1024, 10), capture_output=True)
    assert out.stdout.split() == [b"393216", b"10", b"11", b"0"], out

    seen = []

    def spy(cmd, *args, **kwargs):
        seen.append(kwargs)
        return REAL_RUN(cmd, *args, **kwargs)

    monkeypatch.setattr(render.subprocess, "run", spy)
    svg = render.render_bytes(synthetic(5, 6, "v"), "svg", limits=render.PUBLIC_LIMITS)
    assert b"<svg" in svg
    assert seen and all(kw.get("preexec_fn") is None for kw in seen)
