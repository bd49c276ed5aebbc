"""Heavy jobs (training, timing, evaluating uploaded weights) in worker processes started on demand.

The autograd page's warm pool (gradviz.workers.pool) serves many short programs. Training and
timing are long, use every CPU and much memory, and change torch's process-wide state
(threads); they must not run in the server, nor hold up the warm pool's queue. So each job
gets its own process:

- started on demand from the pool's forkserver (torch already imported there, so the
  start is a fork, not an import), no permanently warm extra process;
- limited as it starts like a pool worker (no core files, no file writes, few open files,
  a data-segment cap, CPU seconds), with the torch thread count the job asks for;
- watched by a thread in the server: a wall clock and a memory watchdog (resident memory
  from /proc) kill it when passed;
- streaming: the job is a generator; every value it yields crosses a pipe as an event,
  its return value is the result. Stop is a message on the same pipe, which the job reads
  between steps (`should_stop()`), so it ends cleanly and still returns what it has;
- exiting when the job ends, so its memory goes back to the system.

Jobs are a fixed table of core functions, named as "module:function" and imported in the
worker; test-only jobs exist only when testing=True. `Slots` caps how many jobs of one
kind run at once, server-wide, and counts who waits. With GRADVIZ_SANDBOX=off a job runs
in a thread of this process instead (same events, no limits). No Streamlit here.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gradviz.util import settings
from gradviz.util.busy import Busy
from gradviz.util.format import fmt_bytes
from gradviz.util.resources import cpu_memory_available
from gradviz.workers.process import (
    ForkserverProcess,
    enabled,
    forkserver_context,
    job_function,
    limit_process,
    resident,
    resolve,
    set_limit,
    signal_name,
)
from gradviz.workers.protocol import (
    ErrorKind,
    Message,
    ProtocolError,
    Tag,
    WorkerError,
    failed,
    receive,
    send,
)
from gradviz.workers.table import HOOKS, JOBS, TEST_JOBS

# How an allocation refused by the worker's data-segment cap surfaces from torch's kernels.
ALLOCATION_FAILED = ("can't allocate memory", "could not create a primitive", "std::bad_alloc")
# A job's own errors that say it ran out of memory (the host's cap, or a device's allocator).
OUT_OF_MEMORY = (ErrorKind.HOST_MEMORY, ErrorKind.DEVICE_MEMORY)

FINISHED = ("done", "error", "died", "timeout", "memory", "killed")

# After Stop (or when a job is abandoned), a job still running this long is killed: a timing
# call or a training step can run for a minute and reads stop requests only between steps.
STOP_GRACE_S = 2.0
TERM_GRACE_S = 1.0  # between SIGTERM and SIGKILL


@dataclass(frozen=True)
class JobLimits:
    seconds: float  # wall clock, from the start of the worker
    memory_bytes: int  # beyond the worker's own memory when it starts
    threads: int = 1
    open_files: int = 64
    cpu_seconds: float | None = None  # default: seconds x threads, plus a margin
    # Stop the job (and kill it STOP_GRACE_S later) when nobody has read its events for this
    # long (a closed tab).
    abandon_after: float | None = None


# ---------------------------------------------------------------- test-only jobs


# ---------------------------------------------------------------- inside a worker


def _job_main(conn, kind: str, args: tuple, config: dict) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file write fails (EFBIG), no kill

    stop = threading.Event()

    def should_stop() -> bool:
        with contextlib.suppress(EOFError, OSError, ProtocolError):
            while not stop.is_set() and conn.poll():
                if receive(conn).tag == Tag.STOP:
                    stop.set()
        return stop.is_set()

    try:
        # the job's imports happen before the limits
        fn = job_function(kind, JOBS, TEST_JOBS if config["testing"] else None)
        resolve(f"{HOOKS}:prepare")(config["threads"])
        limit_process(config)
        used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
        set_limit(resource.RLIMIT_CPU, int(used + config["cpu_seconds"]) + 1)
        send(conn, Message(Tag.READY, resident(os.getpid())))
        gen = fn(*args, should_stop=should_stop)
        while True:
            send(conn, Message(Tag.EVENT, next(gen)))
    except StopIteration as end:
        reply = Message(Tag.DONE, end.value)
    except BaseException as exc:  # noqa: BLE001 - reported, never raised in the parent
        reply = failed(WorkerError.of(exc))
    try:
        send(conn, reply)
    except Exception as exc:  # an unpicklable result
        text = f"the result could not be sent back: {exc}"
        send(conn, failed(WorkerError(ErrorKind.RESULT, text, "RuntimeError")))
    conn.close()


# ---------------------------------------------------------------- in the server


class Job:
    """One job in its own worker process (or, in_process=True, a thread), watched and streamed.

    status: starting | running | done | error | died | timeout | memory | killed.
    events: everything the job yielded so far; result: its return value once done;
    message: what went wrong otherwise, and error (status error): the job's own error as
    data (gradviz.workers.protocol.WorkerError), whose kind callers branch on.
    """

    def __init__(
        self,
        kind: str,
        args: tuple,
        limits: JobLimits,
        *,
        testing: bool = False,
        in_process: bool | None = None,
        on_finish: Callable[[], None] | None = None,
    ):
        if kind not in JOBS and not (testing and kind in TEST_JOBS):
            raise ValueError(f"unknown job {kind!r}")
        self.kind, self.args, self.limits, self.testing = kind, args, limits, testing
        self.in_process = (not enabled()) if in_process is None else in_process
        self.events: list = []
        self.result = None
        self.status = "starting"
        self.error: WorkerError | None = None
        self.message = ""
        self.pid: int | None = None
        self.peak_resident = 0  # bytes beyond the worker's start, as the watchdog saw them
        self.stop_requested = False
        self.abandoned = False  # stopped because nobody read its events for a while
        self.last_read = time.monotonic()
        self._stop = threading.Event()
        self._kill_at: float | None = None
        self._cond = threading.Condition()
        self._on_finish = on_finish
        self._proc = None
        self._conn = None
        self.started = time.monotonic()
        target = self._run_thread if self.in_process else self._watch
        if not self.in_process:
            self._start_process()
            self.args = ()  # the worker has them: a job keeps no copy (uploaded weights)
        self._thread = threading.Thread(target=target, daemon=True, name=f"gradviz job {kind}")
        self._thread.start()

    # -- starting

    def _start_process(self) -> None:
        ctx = forkserver_context()
        limits = self.limits
        config = {
            "threads": limits.threads,
            "open_files": limits.open_files,
            "memory_bytes": limits.memory_bytes,
            "testing": self.testing,
            "cpu_seconds": limits.cpu_seconds or limits.seconds * max(1, limits.threads) + 10,
        }
        self._conn, child = ctx.Pipe()
        self._proc = ForkserverProcess(
            target=_job_main, args=(child, self.kind, self.args, config), daemon=True
        )
        self._proc.start()
        child.close()
        self.pid = self._proc.pid

    # -- what the caller uses

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def stop(self, grace: float | None = None) -> None:
        """Ask the job to end at its next step; kill it if it is still running `grace` s later."""
        self.stop_requested = True
        self._stop.set()
        if self._conn is not None and not self.finished:
            with contextlib.suppress(OSError, ValueError, BrokenPipeError):
                send(self._conn, Message(Tag.STOP))
        if grace is not None:
            at = time.monotonic() + grace
            self._kill_at = at if self._kill_at is None else min(self._kill_at, at)

    def kill(self) -> None:
        """End the worker now (a thread cannot be killed: it is asked to stop)."""
        if self.in_process:
            self.stop()
            return
        self._kill_at = time.monotonic()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.finished

    def next_events(self, since: int, timeout: float = 0.5) -> list:
        """Events after the first `since`, waiting up to `timeout` s for one (or the end)."""
        self.last_read = time.monotonic()
        with self._cond:
            if len(self.events) <= since and not self.finished:
                self._cond.wait(timeout)
            self.last_read = time.monotonic()
            return self.events[since:]

    def stream(self, since: int = 0, poll: float = 0.5) -> Iterator:
        """Yield every event from index `since` as it arrives, until the job has finished."""
        while True:
            new = self.next_events(since, poll)
            since += len(new)
            yield from new
            if self.finished and since >= len(self.events):
                return

    def describe_failure(self, what: str = "the job") -> str:
        """One plain sentence for a job that did not finish with a result (starts capitalised)."""
        text = self._failure(what)
        return text[:1].upper() + text[1:]

    def _failure(self, what: str) -> str:
        s = self.status
        if s == "timeout":
            return (
                f"{what} ran for more than {self.limits.seconds:.0f} s, the limit, and was stopped."
            )
        out_of_memory = s == "error" and (
            (self.error is not None and self.error.kind in OUT_OF_MEMORY)
            or any(sign in self.message for sign in ALLOCATION_FAILED)
        )
        if s == "memory" or out_of_memory:
            return (
                f"{what} needed more than {fmt_bytes(self.limits.memory_bytes)} of memory, the "
                "limit for one job here, and was stopped. Try a smaller size or batch."
            )
        if s == "died":
            if self.message == "SIGXCPU":
                return f"{what} used more CPU time than it may and was stopped."
            return f"the worker process running {what} ended unexpectedly ({self.message})."
        if s == "killed":
            return f"{what} was stopped before it finished."
        if s == "error":
            name = "" if self.error is None else self.error.name
            return f"{what} failed: {name}: {self.message}"
        return ""

    # -- the watching thread

    def _append(self, event) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def _finish(
        self, status: str, message: str = "", result=None, error: WorkerError | None = None
    ) -> None:
        with self._cond:
            if self.finished:
                return
            self.result, self.message, self.error = result, message, error
            self.status = status
            self._cond.notify_all()

    def _release(self) -> None:
        # After the worker has exited, so the next job does not meet its memory.
        if self._on_finish is not None:
            self._on_finish()

    def _handle(self, msg: Message) -> None:
        if msg.tag == Tag.EVENT:
            self._append(msg.value)
        elif msg.tag == Tag.DONE:
            self._finish("done", result=msg.value)
        elif msg.tag == Tag.ERROR:
            self._finish("error", msg.error.message, error=msg.error)
        elif msg.tag == Tag.READY:
            self._baseline = msg.value
            self.status = "running"

    def _drain(self) -> None:
        with contextlib.suppress(EOFError, OSError, ProtocolError):
            while self._conn.poll(0):
                self._handle(receive(self._conn))

    def _kill_process(self) -> None:
        """SIGTERM, then SIGKILL if the worker is still there TERM_GRACE_S later."""
        for sig, wait in ((signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, 5.0)):
            if not self._proc.is_alive():
                break
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)
            self._proc.join(wait)

    def _watch(self) -> None:
        self._baseline = 0
        deadline = self.started + self.limits.seconds
        try:
            while not self.finished:
                try:
                    # Read what has arrived, then always check the limits: a job that sends
                    # events without pause must still meet its wall clock and memory cap.
                    if self._conn.poll(0.05):
                        self._handle(receive(self._conn))
                    if self.finished:
                        break
                except (EOFError, OSError):
                    self._proc.join(2)
                    self._finish("died", signal_name(self._proc.exitcode))
                    break
                except ProtocolError as exc:  # not a message: the worker is not ours to trust
                    self._kill_process()
                    self._finish("died", f"it sent what is not a message: {exc}")
                    break
                if not self._proc.is_alive():
                    self._drain()
                    self._finish("died", signal_name(self._proc.exitcode))
                    break
                if self.status == "running":
                    grown = resident(self.pid) - self._baseline
                    self.peak_resident = max(self.peak_resident, grown)
                    if grown > self.limits.memory_bytes:
                        self._kill_process()
                        self._finish("memory", fmt_bytes(grown))
                        break
                now = time.monotonic()
                idle = self.limits.abandon_after
                if idle is not None and not self.stop_requested and now - self.last_read > idle:
                    self.abandoned = True
                    self.stop(grace=STOP_GRACE_S)
                if now > deadline:
                    self._kill_process()
                    self._finish("timeout")
                    break
                if self._kill_at is not None and now >= self._kill_at:
                    self._kill_process()
                    self._finish("killed")
                    break
        finally:
            self._proc.join(10)  # the worker exits after sending its result
            if self._proc.is_alive():
                self._kill_process()
            with contextlib.suppress(OSError):
                self._conn.close()
            if not self.finished:
                self._finish("died", "the worker could not be watched")
            self._release()

    def _run_thread(self) -> None:
        self.status = "running"
        try:
            gen = job_function(self.kind, JOBS, TEST_JOBS if self.testing else None)(
                *self.args, should_stop=self._stop.is_set
            )
            while True:
                self._append(next(gen))
        except StopIteration as end:
            self._finish("done", result=end.value)
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            error = WorkerError.of(exc)
            self._finish("error", error.message, error=error)
        finally:
            self._release()


# ---------------------------------------------------------------- how many at once


class Slots:
    """At most `size` jobs of one kind at a time, server-wide; others wait in line."""

    def __init__(self, size: int, name: str = "job"):
        self.size, self.name = max(1, int(size)), name
        self.in_use = 0
        self.waiting = 0
        self._cond = threading.Condition()

    def try_acquire(self) -> bool:
        with self._cond:
            if self.in_use < self.size:
                self.in_use += 1
                return True
            return False

    def acquire(
        self, timeout: float, on_wait: Callable[[int, int], None] | None = None, poll: float = 1.0
    ) -> None:
        """Take a slot, waiting up to `timeout` s; on_wait(in_use, ahead) is called while waiting.

        Raises Busy with a plain message when no slot frees in time.
        """
        end = time.monotonic() + timeout
        with self._cond:
            if self.in_use < self.size:
                self.in_use += 1
                return
            self.waiting += 1
            ticket = self.waiting
        try:
            while True:
                if on_wait is not None:
                    on_wait(self.in_use, max(0, ticket - 1))
                with self._cond:
                    if self.in_use < self.size:
                        self.in_use += 1
                        return
                    left = end - time.monotonic()
                    if left <= 0:
                        raise Busy(self.busy_message())
                    self._cond.wait(min(poll, left))
        finally:
            with self._cond:
                self.waiting -= 1

    def release(self) -> None:
        with self._cond:
            self.in_use = max(0, self.in_use - 1)
            self._cond.notify_all()

    def busy_message(self) -> str:
        waiting = self.waiting
        queue = f", {waiting} other visitor{'s' if waiting != 1 else ''} waiting" if waiting else ""
        return (
            f"The server is busy: {self.in_use} {self.name} job{'s' if self.in_use != 1 else ''} "
            f"running (at most {self.size} at a time{queue}). Try again in a minute."
        )


_slots: dict[str, Slots] = {}
_slots_lock = threading.Lock()
SLOT_ENV = {  # the setting that sizes each kind's slots
    "training": "GRADVIZ_TRAINING_JOBS",
    "speed": "GRADVIZ_SPEED_JOBS",
    "heavy": "GRADVIZ_HEAVY_JOBS",
    "slides": "GRADVIZ_SLIDES_JOBS",
    "weights": "GRADVIZ_WEIGHTS_JOBS",
}


HEAVY = ("training", "speed")  # share one slot on a public host


def slots(name: str) -> Slots:
    """The server-wide slots for one kind of job (size from its SLOT_ENV setting; 1 for a kind
    without one).

    On a public host (GRADVIZ_PUBLIC=1) training and timing share one slot: one heavy job at a
    time keeps the worst case of memory to the server, the warm worker and one job."""
    if name in HEAVY and settings.profile().heavy_share_slot:
        name = "heavy"
    with _slots_lock:
        if name not in _slots:
            size = settings.integer(SLOT_ENV[name]) if name in SLOT_ENV else 1
            _slots[name] = Slots(size, name)
        return _slots[name]


def start(
    kind: str,
    args: tuple,
    limits: JobLimits,
    slot: Slots | None = None,
    *,
    testing: bool = False,
    in_process: bool | None = None,
) -> Job:
    """Start a job holding an already acquired slot, which is released when the job ends."""
    try:
        return Job(
            kind,
            args,
            limits,
            testing=testing,
            in_process=in_process,
            on_finish=None if slot is None else slot.release,
        )
    except BaseException:
        if slot is not None:
            slot.release()
        raise


def memory_for_job(configured: int, fraction: float = 0.8) -> int:
    """The configured memory cap, lowered to `fraction` of what the host has free now."""
    free = cpu_memory_available()
    return configured if free is None else min(configured, int(free * fraction))
