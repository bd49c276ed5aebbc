"""Run a program or a gradient check for a page or the command line: in the warm pool of
limited workers (gradviz.workers.pool), or in this process with GRADVIZ_SANDBOX=off. Always
a result, never an exception for anything a visitor typed; a worker's death is said in
words. No torch here.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from gradviz.program.results.limits import (
    DEFAULT_LIMITS,
    PUBLIC_PROGRAM_LIMITS,
    Limits,
    tightest,
)
from gradviz.program.results.reports import ErrorDetails, RunStats
from gradviz.program.results.trace import GradCheckResult, RunOptions, Trace
from gradviz.program.syntax.checker import parse
from gradviz.program.syntax.program_error import ProgramError
from gradviz.util import settings
from gradviz.util.busy import Busy
from gradviz.util.format import fmt_bytes
from gradviz.workers.pool import Outcome, Pool, SandboxLimits
from gradviz.workers.process import enabled, resolve
from gradviz.workers.table import PROGRAM_JOBS
from gradviz.workers.turns import WAITING

_default: Pool | None = None
_default_lock = threading.Lock()


def default_pool() -> Pool:
    """The process's pool, started on first use (the UI keeps it for the server's life), with
    the host's limits (util.settings: the profile and the GRADVIZ_* settings)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            public = settings.public_host()
            budget = settings.number("GRADVIZ_VISITOR_SECONDS") if public else 0.0
            _default = Pool(
                SandboxLimits(
                    workers=settings.integer("GRADVIZ_WORKERS"),
                    run_seconds=settings.number("GRADVIZ_RUN_SECONDS"),
                    memory_bytes=settings.integer("GRADVIZ_WORKER_MEMORY"),
                    visitor_seconds_per_minute=budget if budget > 0 else None,
                    decoded_bytes=settings.profile().result_memory,
                )
            )
        return _default


@contextlib.contextmanager
def waiting_told(tell: Callable[[int, float], None]) -> Iterator[None]:
    """Within this block, a run of this thread (or context) that waits for its turn in the
    pool tells `tell` its place in line and the seconds left, each time they change."""
    token = WAITING.set(tell)
    try:
        yield
    finally:
        WAITING.reset(token)


def program_limits(asked: Limits) -> Limits:
    """The caps a program gets: what the caller asked, within the host's (public: smaller)."""
    return tightest(asked, PUBLIC_PROGRAM_LIMITS if settings.public_host() else DEFAULT_LIMITS)


def _in_process(kind: str):
    """A pool job's function, to run in this process (GRADVIZ_SANDBOX=off)."""
    return resolve(PROGRAM_JOBS[kind])


def over_memory(memory_bytes: int, reached: int | None = None) -> str:
    """The one wording of the memory cap, whoever met it: the watchdog or the worker's own
    peak (`reached`: what the program got to, then stopped), or torch's allocator (refused at
    the line that asked)."""
    if reached is None:
        got, how = "", "it was refused at this line"
    else:
        got, how = f"; it reached {fmt_bytes(reached)}", "it was stopped"
    return (
        f"the program needs more memory than one run may use ({fmt_bytes(memory_bytes)} "
        f"beyond the runner's own{got}); {how}, nothing else was affected"
    )


def describe(outcome: Outcome, seconds: float, memory_bytes: int) -> ProgramError:
    """A dead, stopped or failed worker as one plain ProgramError."""
    if outcome.status == "timeout":
        return ProgramError(
            "limit",
            f"the program ran for more than {seconds:.0f} s, the limit per run; it was stopped. "
            "Nothing else was affected.",
            hint="Use smaller tensors or fewer operations.",
        )
    if outcome.status == "memory":
        return ProgramError(
            "limit",
            over_memory(memory_bytes, reached=outcome.value),
            hint="Use smaller tensors.",
        )
    if outcome.status == "died":
        how = outcome.message
        if how == "SIGXCPU":
            return ProgramError(
                "limit",
                f"the program used more than {seconds:.0f} s of CPU time, the limit per run; "
                "it was stopped. Nothing else was affected.",
            )
        return ProgramError(
            "runtime",
            f"the program stopped the worker process that ran it (killed by {how}); "
            "nothing else was affected. Run it again, or change it.",
            details=ErrorDetails(worker=how),
        )
    if outcome.status == "result":
        return ProgramError(
            "limit",
            f"the program's result is too big to show: {outcome.message}. Nothing else was "
            "affected.",
            hint="Name fewer tensors, or make them smaller.",
        )
    return ProgramError("internal", f"the program runner failed: {outcome.message}")


def _allocator_failed(outcome: Outcome) -> bool:
    """Whether a finished run met the worker's RLIMIT_DATA (torch's allocator failed): the
    pool runs it again in a fresh worker when the worker had run other programs first."""
    err = outcome.value.error if outcome.status == "ok" else None
    return bool(err and err.kind == "runtime" and "can't allocate memory" in err.message)


def _out_of_memory(outcome: Outcome, memory_bytes: int) -> Trace:
    """torch's allocator failing at the worker's RLIMIT_DATA, said as the cap it is. The
    pool gives this verdict from a fresh worker only (see _allocator_failed), so it is the
    program's own and may be kept like any error of the program."""
    trace = outcome.value
    if _allocator_failed(outcome):
        err = trace.error
        trace.error = replace(
            err,
            kind="limit",
            message=over_memory(memory_bytes),
            hint="Use smaller tensors.",
            details=ErrorDetails(),
        )
    return trace


def run_isolated(
    source, options=None, pool: Pool | None = None, raise_busy: bool = False, visitor: str = ""
):
    """run_program in a worker: always a Trace, never an exception (except Busy on request).

    The server side needs no torch: text that is not a string, or too long, is refused here
    by the parser's own checks, and everything else is run by a worker. `visitor` names who
    asks (one key for all tabs of one visitor, if the page can tell): visitors take turns."""
    options = options or RunOptions()
    options = replace(options, limits=program_limits(options.limits))
    if not enabled() and pool is None:
        return _in_process("run")(source, options)
    if not isinstance(source, str) or len(source) > options.limits.max_source_chars:
        try:  # refused before anything runs: wrong type, size
            parse(source, options.limits)
        except ProgramError as exc:
            text = source if isinstance(source, str) else ""
            return Trace(source=text, error=exc.report(), stats=RunStats(seconds=0.0))
    pool = pool or default_pool()
    seconds = pool.limits.run_seconds
    started = time.perf_counter()
    try:
        outcome = pool.call("run", (source, options), seconds, visitor, _allocator_failed)
    except Busy as exc:
        if raise_busy:
            raise
        outcome = Outcome("error", message=str(exc))
    if outcome.status == "ok":
        trace = outcome.value
        if outcome.decoded is not None:  # the server's own count, not the worker's
            trace.stats = replace(trace.stats, decoded_bytes=outcome.decoded)
        return _out_of_memory(outcome, pool.limits.memory_bytes)
    err = describe(outcome, seconds, pool.limits.memory_bytes)
    return Trace(
        source=source,
        error=err.report(),
        stats=RunStats(seconds=time.perf_counter() - started, worker=outcome.status),
    )


def check_isolated(
    source: str,
    target: str,
    shown: dict,
    options=None,
    ones: bool = False,
    pool: Pool | None = None,
    visitor: str = "",
):
    """check_gradients in a worker; a failure comes back as a failed GradCheckResult.
    `visitor` as for run_isolated."""
    options = options or RunOptions()
    options = replace(options, limits=program_limits(options.limits))
    if not enabled() and pool is None:
        return _in_process("check")(source, target, shown, options, ones)
    if not isinstance(source, str) or len(source) > DEFAULT_LIMITS.max_source_chars:
        return GradCheckResult(False, "The program must be text within the size limit.")
    pool = pool or default_pool()
    seconds = pool.limits.check_seconds
    try:
        outcome = pool.call("check", (source, target, shown, options, ones), seconds, visitor)
    except Busy as exc:
        return GradCheckResult(False, f"Could not check now: {exc}.")
    if outcome.status == "ok":
        return outcome.value
    err = describe(outcome, seconds, pool.limits.memory_bytes)
    return GradCheckResult(False, f"The gradient check was stopped: {err.message}")
