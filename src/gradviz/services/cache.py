"""The Autograd page's server-wide caches: program results and drawings, each kept once for
every session and bounded in bytes and age, and single-flight of both (sessions asking for the
same run or drawing at the same moment wait for one). Each session's latest result is kept
unpickled as its own copy, so a rerun does not unpickle it again.

- `run_cached(source, backward, ones, retain, moves, visitor)`: a program's result, run at
  most once per program and options while it is cached or being run.
- `cached_bytes(dot, fmt, scale, visitor)`: a drawing's bytes, laid out at most once.
- `results()`, `session_results()`, `drawings()`: the caches themselves (one per process).

No Streamlit and no torch here.
"""

from __future__ import annotations

import functools
import hashlib
import pickle

from gradviz.graph.render import render_bytes
from gradviz.program.results.trace import RunOptions, Trace
from gradviz.services import landing
from gradviz.services.programs import run_isolated
from gradviz.util import settings
from gradviz.util.memo import ByteLRU, SingleFlight
from gradviz.util.plainsize import decoded_size

# Results kept for every session: bounded in bytes and age, so a few huge results (the
# worker caps one at trace.MAX_RESULT_BYTES) cannot hold the host's memory for long.
RESULTS_SECONDS = 3600.0


@functools.cache
def results() -> ByteLRU[bytes]:
    """The server's one cache of program results, each kept pickled: every session gets its
    own copy, as st.cache_data would give, and the bound counts the real bytes."""
    return ByteLRU(max_bytes=settings.profile().results_bytes, ttl=RESULTS_SECONDS, max_entries=256)


# Each session's latest result, as that session's own copy, so that a rerun (every click)
# does not unpickle it again: bounded in bytes once unpickled (what the server counted as it
# read the result back, util.plainsize) over every session, and in age; a session whose copy
# was dropped unpickles it again from results().
SESSION_RESULTS_SECONDS = 900.0


@functools.cache
def session_results() -> ByteLRU[tuple[tuple, Trace, int]]:
    """visitor (one per session) -> (result key, that session's Trace, its bytes unpickled)."""
    return ByteLRU(
        max_bytes=settings.profile().session_results_bytes,
        ttl=SESSION_RESULTS_SECONDS,
        max_entries=1024,
        size=lambda e: e[2],
    )


def _unpickled(trace: Trace) -> int:
    """The bytes `trace` takes here: as counted when it was read back (run_isolated), or
    counted now."""
    counted = trace.stats.decoded_bytes
    return counted if counted is not None else decoded_size(trace)


@functools.cache
def runs_in_flight() -> SingleFlight[tuple[Trace, bytes | None]]:
    """Programs being run now: sessions that submit the same program at the same moment (a
    class running the exercise as given) wait for one run instead of queueing thirty."""
    return SingleFlight()


def run_cached(
    source: str,
    backward: str | None,
    ones: bool,
    retain: bool,
    moves: tuple = (),
    visitor: str = "",
) -> Trace:
    """The program's result, run at most once per program and options while it is cached
    or being run.

    Only successes and the program's own errors are kept and shared: a run whose worker was
    killed (time, memory, a crash) or never started is shown to this session and run again by
    the next. Busy (the visitor's turn did not come) is raised, never cached."""
    options = RunOptions(
        backward=backward,
        backward_ones=ones,
        retain_intermediate=retain,
        device_overrides=dict(moves) or None,
    )
    first = landing.stored(source, options)  # the lesson as a first visit opens it: stored
    if first is not None:
        return first
    key = (hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest(), backward, ones)
    key += (retain, moves)
    mine = session_results().get(visitor) if visitor else None
    if mine is not None and mine[0] == key:
        return mine[1]  # this session's own copy, unpickled once
    cache = results()
    kept = cache.get(key)
    if kept is not None:
        return _keep(visitor, key, pickle.loads(kept))  # pickled by this server itself

    def run() -> tuple[Trace, bytes | None]:
        trace = run_isolated(source, options, raise_busy=True, visitor=visitor)
        if trace.stats.worker is not None:  # run_isolated sets it when the worker did not finish
            return trace, None
        data = pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL)
        cache.put(key, data)
        return trace, data

    (trace, data), own = runs_in_flight().run(key, run, lambda result: result[1] is not None)
    if data is None:
        return trace
    return _keep(visitor, key, trace if own else pickle.loads(data))  # a copy each session


def _keep(visitor: str, key: tuple, trace: Trace) -> Trace:
    """`trace`, kept as `visitor`'s copy of the result `key` (replacing their last one)."""
    if visitor:
        session_results().put(visitor, (key, trace, _unpickled(trace)))
    return trace


# Drawings kept for every session: bounded in bytes, so big PNGs cannot fill the host.
DRAWINGS_SECONDS = 3600.0


@functools.cache
def drawings() -> ByteLRU[bytes]:
    """The server's one cache of drawings, so a rerun never lays a graph out again."""
    return ByteLRU(
        max_bytes=settings.profile().drawings_bytes, ttl=DRAWINGS_SECONDS, max_entries=256
    )


@functools.cache
def drawings_in_flight() -> SingleFlight[bytes]:
    """Drawings being laid out now: equal graphs asked at the same moment are laid out once
    (the public host lays out one graph at a time)."""
    return SingleFlight()


def cached_bytes(dot: str, fmt: str, scale: float, visitor: str = "") -> bytes:
    """The drawing's bytes, laid out at most once per graph, theme and format; `visitor`
    (who asks) has one layout at a time.

    render_bytes remembers refusals and failures itself, so those are not retried either."""
    key = (hashlib.sha256(dot.encode("utf-8", "surrogatepass")).hexdigest(), fmt, scale)
    cache = drawings()
    data = cache.get(key)
    if data is None:

        def draw_once() -> bytes:
            drawn = render_bytes(dot, fmt, scale, visitor=visitor)
            cache.put(key, drawn)
            return drawn

        data, _ = drawings_in_flight().run(key, draw_once)
    return data
