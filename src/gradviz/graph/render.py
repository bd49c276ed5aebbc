"""Drawing a graph: a trace's DOT of either view (`draw`, written by gradviz.graph.dot),
and DOT text -> svg/png/pdf bytes by Graphviz's `dot` under limits (`render_bytes`).

`dot` runs with the limits of `RenderLimits` (the server's, a public host's, the command
line's or none): graphs over a size or too slow to lay out are refused before it starts, and
it runs under rlimits, a timeout and a cap on layouts at once. Without it, `render_bytes`
raises RenderUnavailable saying what to install.
"""

from __future__ import annotations

import hashlib
import re
import resource
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from gradviz.graph import layoutcost
from gradviz.graph.dot import coloring, restyle_classic, to_dot
from gradviz.graph.model import DEFAULT_DRAWING, DrawOptions, GraphModel
from gradviz.graph.textmetrics import svg_environment
from gradviz.util import settings
from gradviz.util.format import fmt_bytes
from gradviz.util.memo import ByteLRU

FORMATS = ("svg", "png", "pdf", "dot")


class RenderUnavailable(RuntimeError):
    """Graphviz's `dot` is missing or failed; the message says what to do."""


def dot_available() -> bool:
    return shutil.which("dot") is not None


# ---------------------------------------------------------------- bytes


@dataclass(frozen=True)
class RenderLimits:
    """What one `dot` run may use: the server lays out graphs anyone can submit.

    A graph over the ceiling for its format, or shaped to be slow to lay out (rows skipped
    by arrows, clusters: graph/layoutcost.py), is refused before `dot` starts; `dot` itself
    runs with an address-space and CPU-time limit, a wall-clock timeout, and at most
    `concurrent` layouts at once in this process (0: no cap). PNGs are scaled down to fit
    `max_side` pixels a side, and output over `max_output_bytes` is refused."""

    memory_bytes: int | None = 512 * 1024 * 1024  # RLIMIT_AS of the dot process
    cpu_seconds: int | None = 20  # RLIMIT_CPU of the dot process
    wall_seconds: float = 30.0
    concurrent: int = 2  # layouts at once in this process; 0 = no cap
    wait_seconds: float = 5.0  # how long a request waits for a free layout slot
    max_nodes: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"svg": 2000, "pdf": 2000, "png": 1500})
    )
    max_edges: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"svg": 4000, "pdf": 4000, "png": 3000})
    )
    max_side: int = 6000  # PNG pixels a side (at most 36 megapixels)
    max_output_bytes: int = 25 * 1024 * 1024
    # The shape that makes a layout slow, counted before `dot` starts (graph/layoutcost.py):
    # rows skipped by arrows, and layer boxes (clusters). None: not counted.
    max_long_steps: int | None = None
    max_clusters: int | None = None


SERVER_LIMITS = RenderLimits()
# A public host (GRADVIZ_PUBLIC=1) shares a small container among all visitors.
PUBLIC_LIMITS = RenderLimits(
    memory_bytes=384 * 1024 * 1024,
    cpu_seconds=10,
    wall_seconds=15.0,
    concurrent=1,
    # Longer than one layout may hold the slot (wall_seconds): a class pressing Run together
    # queues 30 small layouts (about 40 ms of CPU each, seconds on a busy host), and one
    # visitor's largest layout must not turn everyone queued behind it into "try again"
    # (bench/class_load.py; docs/BENCHMARKS.md). Only one dot runs at a time all the same.
    wait_seconds=20.0,
    max_nodes=MappingProxyType({"svg": 1500, "pdf": 1500, "png": 1000}),
    max_edges=MappingProxyType({"svg": 3000, "pdf": 3000, "png": 2000}),
    max_side=5000,
    max_output_bytes=15 * 1024 * 1024,
    # Rows skipped by arrows: the same leaf added at each of 50 steps skips 2,945 and takes
    # `dot` 3 s of CPU here, 60 steps (4,145) 11 s; no preset skips more than 37.
    # Clusters cost far less: 701 took 0.9 s, so only far more than any program within the
    # node limits makes is refused (bench/layout_cost.py; docs/BENCHMARKS.md).
    max_long_steps=3000,
    max_clusters=800,
)
# `python -m gradviz render` on a lecturer's own machine: big graphs, still no runaway.
CLI_LIMITS = RenderLimits(
    memory_bytes=4 * 1024 * 1024 * 1024,
    cpu_seconds=600,
    wall_seconds=600.0,
    concurrent=0,
    max_nodes=MappingProxyType({"svg": 50_000, "pdf": 50_000, "png": 20_000}),
    max_edges=MappingProxyType({"svg": 100_000, "pdf": 100_000, "png": 40_000}),
    max_side=16000,
    max_output_bytes=512 * 1024 * 1024,
)
# `--no-limits`: Graphviz's own limits only (PNG sides still stop at cairo's 32767), and
# no rlimits on the dot process.
NO_LIMITS = RenderLimits(
    memory_bytes=None,
    cpu_seconds=None,
    wall_seconds=24 * 3600.0,
    concurrent=0,
    max_nodes=MappingProxyType({}),
    max_edges=MappingProxyType({}),
    max_side=32767,
    max_output_bytes=1 << 62,
)


def server_limits() -> RenderLimits:
    """The limits for the app: smaller on a public host."""
    return PUBLIC_LIMITS if settings.public_host() else SERVER_LIMITS


_SLOTS: dict[int, threading.BoundedSemaphore] = {}
_SLOTS_LOCK = threading.Lock()
# Refusals, timeouts and failures, so a rerun does not lay out a failing graph again.
_FAILURES: ByteLRU[str] = ByteLRU(max_bytes=512 * 1024, ttl=3600.0, max_entries=1024)


def forget_failures() -> None:
    """Forget remembered refusals and failures (tests; a server after its limits change)."""
    _FAILURES.clear()


def _slots(n: int) -> threading.BoundedSemaphore:
    with _SLOTS_LOCK:
        if n not in _SLOTS:
            _SLOTS[n] = threading.BoundedSemaphore(n)
        return _SLOTS[n]


# Visitors with a layout waiting for a slot or running: one each, so that one visitor's
# drawings (more tabs, quick reruns) cannot fill the queue in front of everyone else's.
_DRAWING: set[str] = set()
_DRAWING_LOCK = threading.Lock()
ONE_EACH = (
    "Your previous drawing is still being laid out, and each visitor gets one at a time; "
    "this one was not started. Wait for that one to finish (another tab or window of yours "
    "may have asked for it) and try again, or export DOT (no drawing needed)."
)


@contextmanager
def _one_each(visitor: str) -> Iterator[None]:
    """Hold `visitor`'s one layout, or raise RenderUnavailable at once ("": not counted)."""
    if not visitor:
        yield
        return
    with _DRAWING_LOCK:
        if visitor in _DRAWING:
            raise RenderUnavailable(ONE_EACH)  # not remembered: theirs will end
        _DRAWING.add(visitor)
    try:
        yield
    finally:
        with _DRAWING_LOCK:
            _DRAWING.discard(visitor)


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NODE_STMT = re.compile(r'(?:^|[{;])\s*("S"|[A-Za-z0-9_.]+)\s*\[', re.M)


def graph_size(dot_source: str) -> tuple[int, int]:
    """(nodes, edges) counted from DOT text, quoted strings aside: the cost of a layout."""
    bare = _QUOTED.sub('"S"', dot_source)
    nodes = sum(1 for m in _NODE_STMT.finditer(bare) if m.group(1) not in ("graph", "node", "edge"))
    return nodes, bare.count("->") + bare.count("--")


def limited_command(cmd: list[str], memory_bytes: int | None, cpu_seconds: int | None) -> list[str]:
    """`cmd` started by /bin/sh after `ulimit` sets dot's rlimits (no core file, address
    space, CPU seconds: SIGXCPU at the limit, SIGKILL a second later), then exec'd in its place.

    Not a preexec_fn: with one, Python must fork() the whole server to start dot (50 to 125
    ms a drawing here, while the public host's one layout slot is held), without it Python
    uses vfork (bench/dot_spawn.py, bench/class_load.py; docs/BENCHMARKS.md). A `ulimit` that fails
    stops the chain: dot never runs without its limits."""
    steps = ["ulimit -c 0"]
    for which, soft, flag in (
        (resource.RLIMIT_AS, memory_bytes, "v"),
        (resource.RLIMIT_CPU, cpu_seconds, "t"),
    ):
        if soft is None:
            continue
        _, hard = resource.getrlimit(which)  # the child inherits this process's hard limit
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        value = max(1, soft // 1024) if flag == "v" else soft  # ulimit -v counts KiB
        steps.append(f"ulimit -S -{flag} {int(value)}")  # soft first: it may not pass hard
        if which == resource.RLIMIT_CPU:
            top = soft + 1 if hard == resource.RLIM_INFINITY else min(soft + 1, hard)
            steps.append(f"ulimit -H -t {int(top)}")
    return ["/bin/sh", "-c", " && ".join(steps) + ' && exec "$0" "$@"', *cmd]


def _failure_key(dot_source: str, fmt: str, scale: float, limits: RenderLimits) -> str:
    digest = hashlib.sha256(dot_source.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}:{fmt}:{scale}:{limits!r}"


def _too_big(dot_source: str, fmt: str, limits: RenderLimits) -> str | None:
    max_nodes = limits.max_nodes.get(fmt)
    max_edges = limits.max_edges.get(fmt)
    # Every node statement graph_size counts takes at least 2 characters (`a[`), every edge
    # 2 (`->`): DOT that short is under the ceilings uncounted (counting 44 kB of DOT takes
    # 1.5 ms, half of what the library's svg() spends in Python besides dot).
    ceilings = [n for n in (max_nodes, max_edges) if n is not None]
    if not ceilings or len(dot_source) // 2 <= min(ceilings):
        return None
    # Nor can it pass them with fewer `[` than max_nodes and fewer `->` and `--` than
    # max_edges in all, quoted text included (graph_size counts node statements that open
    # with `[` outside quotes, and arrows outside quotes): 0.4 ms, where counting the
    # 390 kB of a 2,003-node chain's DOT takes 11 ms.
    if (max_nodes is None or dot_source.count("[") <= max_nodes) and (
        max_edges is None or dot_source.count("->") + dot_source.count("--") <= max_edges
    ):
        return None
    nodes, edges = graph_size(dot_source)
    if (max_nodes is None or nodes <= max_nodes) and (max_edges is None or edges <= max_edges):
        return None
    ceiling = " and ".join(
        f"{n:,} {what}" for n, what in ((max_nodes, "nodes"), (max_edges, "edges")) if n is not None
    )
    return (
        f"This graph is too big to draw as {fmt.upper()} here: {nodes:,} nodes and "
        f"{edges:,} edges; the limit is {ceiling}. Export DOT instead and render it on your "
        "own computer (`dot -Tsvg graph.dot -o graph.svg`, or `python -m gradviz render "
        "PROGRAM.py -o graph.svg`), or draw a smaller program."
    )


_SIZE_ATTR = re.compile(r'\bsize\s*=\s*"?\s*([0-9]*\.?[0-9]+)\s*,\s*([0-9]*\.?[0-9]+)')


def _with_png_bounds(dot_source: str, dpi: int, max_side: int) -> str:
    """DOT whose last graph attributes fix dpi and scale the drawing to max_side pixels.

    The last assignment wins in DOT, so a dpi or size in the source cannot undo this; a
    smaller size the source sets (torchviz's 12x12 inches) is kept."""
    width = height = max_side / dpi
    sizes = _SIZE_ATTR.findall(dot_source)
    if sizes:
        width, height = min(width, float(sizes[-1][0])), min(height, float(sizes[-1][1]))
    head, sep, _ = dot_source.rstrip().rpartition("}")
    if not sep:
        return dot_source
    return head + f'  graph [dpi={dpi} size="{width:.4f},{height:.4f}"];\n}}\n'


def render_bytes(
    dot_source: str,
    fmt: str,
    scale: float = 1.0,
    timeout: float | None = None,
    limits: RenderLimits | None = None,
    visitor: str = "",
) -> bytes:
    """svg/png/pdf bytes from DOT via Graphviz's `dot`, or the DOT text itself.

    `limits` bound what `dot` may use (default: the server's); a refusal, a timeout or a
    failure raises RenderUnavailable with what to do, and is remembered so the same
    request is refused at once next time. `visitor` (the pages' visitor key) has one
    layout at a time, waiting or running: a second one is refused at once, not queued."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "dot":
        return dot_source.encode("utf-8")
    limits = server_limits() if limits is None else limits
    if timeout is not None:
        limits = replace(limits, wall_seconds=float(timeout))
    exe = shutil.which("dot")
    if exe is None:
        raise RenderUnavailable(
            f"Exporting {fmt.upper()} needs Graphviz's `dot` program, which is not installed here. "
            "Install Graphviz (Debian/Ubuntu: `sudo apt-get install graphviz`; macOS: "
            "`brew install graphviz`; Windows: `winget install graphviz`), or export DOT and "
            "render it elsewhere."
        )
    if fmt == "png":
        scale = min(max(float(scale), 0.5), 4.0)
    key = _failure_key(dot_source, fmt, scale, limits)
    remembered = _FAILURES.get(key)
    if remembered is not None:
        raise RenderUnavailable(remembered)
    refusal = _too_big(dot_source, fmt, limits) or layoutcost.refusal(
        dot_source, limits.max_long_steps, limits.max_clusters
    )
    if refusal is not None:
        _FAILURES.put(key, refusal)
        raise RenderUnavailable(refusal)
    cmd = [exe, f"-T{fmt}"]
    source = dot_source
    if fmt == "png":
        source = _with_png_bounds(dot_source, int(96 * scale), limits.max_side)
    with _one_each(visitor):
        slot = _slots(limits.concurrent) if limits.concurrent > 0 else None
        if slot is not None and not slot.acquire(timeout=limits.wait_seconds):
            raise RenderUnavailable(  # not remembered: the next try may find a free slot
                "The server is drawing other graphs right now; try again in a few seconds, "
                "or export DOT (no drawing needed)."
            )
        try:
            message, out = _run_dot(cmd, source, fmt, limits)
        finally:
            if slot is not None:
                slot.release()
    if message is not None:
        _FAILURES.put(key, message)
        raise RenderUnavailable(message)
    return out


# What dot, cairo, pango and GLib print when the address-space limit stops them: a failed
# malloc, or a thread whose stack could not be mapped (GLib then aborts with SIGTRAP).
OUT_OF_MEMORY = (
    "out of memory",
    "cannot allocate memory",
    "resource temporarily unavailable",
    "bad_alloc",
    "failed to allocate",
)


def _run_dot(
    cmd: list[str], source: str, fmt: str, limits: RenderLimits
) -> tuple[str | None, bytes]:
    """(None, output) or (the message saying why not, b""). An SVG is laid out with
    Graphviz's own text metrics, without pango (graph/textmetrics.py)."""
    exe = cmd[0]
    advice = " Export DOT instead and render it on your own computer, or draw a smaller program."
    try:
        if limits.memory_bytes is not None or limits.cpu_seconds is not None:
            cmd = limited_command(cmd, limits.memory_bytes, limits.cpu_seconds)
        proc = subprocess.run(
            cmd,
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=limits.wall_seconds,
            check=False,
            env=svg_environment(exe) if fmt == "svg" else None,
        )
    except subprocess.TimeoutExpired:
        return (
            f"Graphviz took longer than {limits.wall_seconds:.0f} s to lay out this graph.{advice}",
            b"",
        )
    err = proc.stderr.decode(errors="replace")
    if proc.returncode == -signal.SIGXCPU or (
        proc.returncode == -signal.SIGKILL and limits.cpu_seconds is not None
    ):
        return (
            f"Graphviz used more than {limits.cpu_seconds} s of CPU time on this graph.{advice}",
            b"",
        )
    if any(sign in err.lower() for sign in OUT_OF_MEMORY) or (
        limits.memory_bytes is not None
        and proc.returncode in (-signal.SIGSEGV, -signal.SIGABRT, -signal.SIGTRAP)
    ):
        limit = fmt_bytes(limits.memory_bytes) if limits.memory_bytes else "the memory available"
        return f"Graphviz needed more than {limit} of memory for this graph.{advice}", b""
    if proc.returncode != 0 or not proc.stdout:
        return "Graphviz could not draw this graph: " + err[:500], b""
    if len(proc.stdout) > limits.max_output_bytes:
        return (
            f"The {fmt.upper()} of this graph is {fmt_bytes(len(proc.stdout))}, more than the "
            f"{fmt_bytes(limits.max_output_bytes)} allowed here.{advice}"
        ), b""
    return None, proc.stdout


def draw(
    trace,
    options: DrawOptions = DEFAULT_DRAWING,
    *,
    highlight: str | None = None,
    done: frozenset[str] | set[str] = frozenset(),
) -> str | None:
    """The DOT of `options.view` for a Trace (None when the classic view has nothing to
    draw), coloured by `options.color` (coloring); `highlight` and `done` as in to_dot."""
    if options.view == "classic":
        return None if trace.classic_dot is None else restyle_classic(trace.classic_dot, options)
    # A program refused before it ran (syntax, forbidden, limit) has no graph: draw an empty one.
    model = trace.graph if trace.graph is not None else GraphModel()
    fills, by_device, note = coloring(model, options.color)
    return to_dot(
        model,
        options,
        highlight=highlight,
        done=done,
        caption=note or None,
        fills=fills,
        by_device=by_device,
    )
