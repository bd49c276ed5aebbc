"""What this host's PyTorch offers, known to the server without importing torch.

The Streamlit server never imports torch (its import alone is about 190 MB of the server's
proportional set size with CPU-only torch; docs/BENCHMARKS.md): programs, timings and
training run in worker processes, and what the pages need to know about the host (torch's
version, the devices, whether CUDA is simulated) is asked of a worker once and kept.

- `facts()`: a HostFacts, gathered by `gradviz.devices.facts.gather()` in a job worker on first use and cached
  for the life of the process (with GRADVIZ_SANDBOX=off, gathered in this process).
- `ask(kind, args)`: run one small job (placement, allocator figures) in a worker and
  return its result.

No Streamlit and no torch here: the facts are gathered by gradviz.devices.facts in a worker.
"""

from __future__ import annotations

import threading
import time
from importlib.metadata import PackageNotFoundError, version

from gradviz.devices.info import HostFacts
from gradviz.devices.transfer_reference import Measurement
from gradviz.services.jobs import run_now
from gradviz.util import first_page
from gradviz.util.resources import available_cpus
from gradviz.workers import jobs
from gradviz.workers.process import enabled

FACTS_SECONDS = 120.0  # first use may wait for the forkserver's torch import
# Room for the worker's memory growth while it asks torch. On a CPU-only host these jobs grow
# by a few MB; on a GPU host the first CUDA call creates a CUDA context in the worker, which
# holds a few hundred MB of host memory: the cap must not stop that. The worker exits at once.
FACTS_MEMORY = 1024 * 1024 * 1024


_facts: HostFacts | None = None
_facts_lock = threading.Lock()
_asking: threading.Thread | None = None  # facts_now's background ask
_ask_lock = threading.Lock()
_failed: tuple[Exception, float] | None = None  # and when (time.monotonic)
FACTS_RETRY_S = 10.0
MEASURE_MEMORY = 256 * 1024 * 1024  # the largest copy is 16 MB; allocator and pinned buffers


def ask(kind: str, args: tuple = (), seconds: float = 60.0, memory_bytes: int = FACTS_MEMORY):
    """Run one small job to its end in a worker and return its result (no slot: these are
    short and light). Raises JobFailed with a plain message when it ends without one."""
    limits = jobs.JobLimits(seconds=seconds, memory_bytes=memory_bytes)
    return run_now(kind, args, limits, None, f"asking the worker ({kind})")


def facts() -> HostFacts:
    """This host's facts, asked of a worker on first use and kept for the process's life."""
    global _facts
    with _facts_lock:
        if _facts is None:
            _facts = ask("host_facts", (), seconds=FACTS_SECONDS)
        return _facts


def facts_now() -> HostFacts | None:
    """The facts if known; else None, and a worker is asked for them in the background (so
    a first page view draws without waiting for a worker's torch import). A failed ask is
    raised here (JobFailed) for FACTS_RETRY_S, then the next call asks again. With
    GRADVIZ_SANDBOX=off (no workers: torch in this process), as facts()."""
    global _asking, _failed
    if not enabled():
        return facts()
    with _ask_lock:  # not _facts_lock: facts() holds that while it asks
        if _facts is not None:
            return _facts
        if _failed is not None:
            failed, when = _failed
            if time.monotonic() - when < FACTS_RETRY_S:
                raise failed
            _failed = None
        if _asking is None or not _asking.is_alive():
            _asking = threading.Thread(target=_ask_facts, name="gradviz-host-facts", daemon=True)
            _asking.start()
    return None


def facts_settled() -> bool:
    """Whether facts_now() has an answer: the facts, or a failure to say."""
    return _facts is not None or _failed is not None


def _ask_facts() -> None:
    global _failed
    first_page.wait()  # the worker's torch import waits for the first view's run
    try:
        facts()
    except Exception as exc:  # said on the page by the next facts_now()
        with _ask_lock:
            _failed = (exc, time.monotonic())


def torch_version() -> str:
    """The installed torch's version, read from its package metadata (no import)."""
    try:
        return version("torch")
    except PackageNotFoundError:
        return "not installed"


def measure_transfers(device: str) -> list[Measurement]:
    """Copy and synchronisation costs, timed in a job worker (one timing at a time per server,
    sharing the Speed page's slot, so they do not slow each other down). Not cached: every
    click measures again, and the page keeps the latest numbers in session state."""
    limits = jobs.JobLimits(seconds=120.0, memory_bytes=MEASURE_MEMORY, threads=available_cpus())
    return run_now(
        "transfer",
        (device,),
        limits,
        "speed",
        "the copy measurements",
        busy="another visitor's timing is running; try again in a moment",
    )
