"""The landing page's first graph without waiting for a worker.

A first visit opens the Autograd page on the lesson's forward graph. Running it needs a
worker, and the first worker waits for torch's import (seconds on a small host). The lesson's
result is the same on every CPU-only host, so gradviz keeps it: `landing.pickle`, next to this
module, holds the result of a real isolated run of the lesson with the page's first options,
for local and for public mode (`make`, written by `python scripts/landing_result.py`).

- `stored(source, options)` gives it only for exactly that program and those options (after
  the host's limits), only on a host with no GPU device (where a run simulates CUDA, as the
  stored run did), and never once a check found it differs from a fresh run; else None and
  the page runs the program in a worker as always.
- `warm_in_background()` starts the worker pool in a thread at the first page view, then
  runs the lesson for real and compares (`verify`): a difference stops the stored result
  being served, for the rest of the server's life.
- tests/unit/services/test_landing.py compares the file with a fresh isolated run, so a change to the
  interpreter or the result's shape that makes it stale fails the tests until it is rewritten.

No torch here: the file holds plain data (gradviz.program.results.trace.Trace) that this project
wrote itself; it is never read from anywhere else.
"""

from __future__ import annotations

import dataclasses
import glob
import logging
import pickle
import re
import threading
from pathlib import Path

from gradviz.program.presets import PRESETS
from gradviz.program.results.limits import DEFAULT_LIMITS, PUBLIC_PROGRAM_LIMITS, tightest
from gradviz.program.results.trace import RunOptions, Trace
from gradviz.services.programs import default_pool, program_limits, run_isolated
from gradviz.util import first_page, settings
from gradviz.workers.pool import Pool
from gradviz.workers.process import enabled

LANDING_FILE = Path(__file__).with_name("landing.pickle")
LOG = logging.getLogger(__name__)
# Device files of a GPU torch could use (NVIDIA, AMD's ROCm): where any exists, a run may
# see a real CUDA device and differ from the stored CPU-only run, so nothing is served.
GPU_DEVICE_FILES = ("/dev/nvidia[0-9]*", "/dev/kfd", "/proc/driver/nvidia/gpus/*")

_lock = threading.Lock()
_state: dict = {"loaded": None, "refuted": False, "warming": None}


def landing_source() -> str:
    return PRESETS[0].source


def landing_options(public: bool) -> RunOptions:
    """What the page asks for on a first visit (gradviz.services.cache.run_cached: no backward,
    no moves), within local or public limits as services.programs.program_limits gives."""
    host = PUBLIC_PROGRAM_LIMITS if public else DEFAULT_LIMITS
    return RunOptions(limits=tightest(RunOptions().limits, host))


def gpu_device_present(patterns=GPU_DEVICE_FILES) -> bool:
    return any(glob.glob(p) for p in patterns)


def make(pool: Pool) -> bytes:
    """The file's contents: the lesson run for real in `pool`, with local and public options."""
    entries = []
    for public in (False, True):
        options = landing_options(public)
        trace = run_isolated(landing_source(), options, pool=pool)
        if trace.error is not None or trace.stats.worker is not None:
            raise RuntimeError(f"the lesson did not run: {trace.error}")
        entries.append((options, trace))
    return pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL)


def _entries() -> list[tuple[RunOptions, bytes]]:
    with _lock:
        if _state["loaded"] is None:
            try:
                entries = pickle.loads(LANDING_FILE.read_bytes())  # this project's own file
                _state["loaded"] = [
                    (o, pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL)) for o, t in entries
                ]
            except Exception as exc:  # missing or unreadable: run as always
                LOG.warning("gradviz: no stored landing result (%s)", exc)
                _state["loaded"] = []
        return _state["loaded"]


def _off() -> bool:
    return not settings.flag("GRADVIZ_LANDING")


def stored(source: str, options: RunOptions) -> Trace | None:
    """The stored result for exactly the landing program and options (a fresh copy), or None.
    GRADVIZ_LANDING=off: never (every run in a worker)."""
    if source != landing_source() or _state["refuted"] or _off() or gpu_device_present():
        return None
    wanted = dataclasses.replace(options, limits=program_limits(options.limits))
    for kept_options, data in _entries():
        if kept_options == wanted:
            return pickle.loads(data)
    return None


def comparable(trace: Trace) -> Trace:
    """A result without what differs between two runs of one program: the time it took,
    torchviz's node names (Python object ids), renumbered in order of appearance, and its
    size read back (counted by the server for a sandboxed run, by cap_result in-process)."""
    names: dict[str, str] = {}
    classic = trace.classic_dot
    if classic is not None:
        classic = re.sub(
            r"\b\d{6,}\b", lambda m: names.setdefault(m.group(0), f"n{len(names)}"), classic
        )
    stats = dataclasses.replace(trace.stats, seconds=0.0, decoded_bytes=None)
    return dataclasses.replace(trace, classic_dot=classic, stats=stats)


def verify(fresh: Trace, options: RunOptions) -> bool:
    """Compare a fresh run with the stored one for these options; a difference (or a failed
    run) stops the stored result being served. True when they agree."""
    kept = stored(landing_source(), options)
    if kept is None:
        return False
    same = fresh.stats.worker is None and comparable(fresh) == comparable(kept)
    if not same:
        _state["refuted"] = True
        LOG.warning("gradviz: the stored landing result differs from a fresh run; not served")
    return same


def _warm() -> None:
    options = landing_options(settings.public_host())
    first_page.wait()  # the first view's run and drawing get the CPU first
    try:
        default_pool()
        if stored(landing_source(), options) is not None:
            verify(run_isolated(landing_source(), options), options)
    except Exception as exc:  # the page runs programs as always; say why in the log
        _state["refuted"] = True
        LOG.warning("gradviz: warming the worker pool failed: %s", exc)


def warm_in_background() -> None:
    """Once per server: start the worker pool in a thread and check the stored result
    (not with GRADVIZ_SANDBOX=off: no pool, programs run in the server's process)."""
    if not enabled():
        return
    with _lock:
        if _state["warming"] is not None:
            return
        _state["warming"] = threading.Thread(target=_warm, name="gradviz-warm", daemon=True)
        _state["warming"].start()
