"""Run user programs outside the server process: a small pool of warm, limited workers.

The interpreter (gradviz.program.interpreter.run) already refuses anything outside the language and checks
sizes before allocating. This module is the second wall, for what an allow-list cannot
promise (a bug in torch, a hang, a segfault, a memory bomb nobody thought of):

- Each program runs in a worker process started from a multiprocessing "forkserver"
  that has imported torch and gradviz once, so a worker starts warm (a fork, not a
  torch import) and the workers share torch's pages with each other.
- A worker limits itself as it starts: no core files, no file writes (RLIMIT_FSIZE=0,
  SIGXFSZ ignored so a write fails instead of killing), few open files, a data-segment
  cap (RLIMIT_DATA: malloc fails, torch raises "can't allocate memory"), CPU seconds
  re-armed for each job (RLIMIT_CPU), and one or two torch threads. RLIMIT_AS is not
  used: the CUDA build of torch maps gigabytes of address space at import.
- The parent enforces a wall-clock timeout and a memory watchdog (anonymous plus
  shared resident memory, read from /proc every 20 ms; the worker reads its own peak after
  each job, so what came and went between two samples has the same verdict), kills the
  worker when either is passed,
  reports the death as an Outcome (gradviz.services.programs says it in words), and starts a fresh worker. Workers
  are recycled after a number of jobs, and at once if torch's global state in them
  (default dtype and device, threads, grad mode, the global RNG) is not as it started.
- A job's result crosses back as plain data (a gradviz.workers.protocol message, the
  same shape every worker loop speaks), bounded before the server reads it: the worker
  counts what it will take once unpickled (gradviz.util.plainsize) and sends that count
  ahead of the pickle (protocol.pack); the parent refuses a message over `result_bytes`
  unread, and one whose count is over `decoded_bytes` undecoded, and unpickles the rest
  allowing no class but gradviz's dataclasses (protocol.unpack: no function, no other
  class: a worker cannot make the server run anything), then counts it again itself
  (Outcome.decoded): what the server keeps does not rest on the worker's word. A small pickle can unpickle big (an empty list: 2 bytes,
  then 56).
- A program's memory verdict is a fresh worker's, never what earlier programs left behind
  (allocator fragmentation, a library's caches): a worker whose resident memory grew past
  `regrow_bytes` above its start is replaced before it runs the next job, and a job that
  meets the memory cap in a worker that had run others runs again, once, in a fresh one.
- Jobs are named in gradviz.workers.table (run a program, check gradients) and imported
  in the worker. Test-only jobs (crash, hang, allocate) exist only in pools made with
  testing=True; program text cannot choose a job.

No Streamlit and no torch here. `gradviz.services.programs.run_isolated` and
`check_isolated` are what the pages call.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import queue
import resource
import signal
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from gradviz.util.format import fmt_bytes
from gradviz.util.plainsize import NotPlain, decoded_size
from gradviz.workers.process import (
    ForkserverProcess,
    forkserver_context,
    job_function,
    limit_process,
    peak_resident,
    proc_status,
    release_memory,
    reset_peak,
    resident,
    resolve,
    set_limit,
    signal_name,
)
from gradviz.workers.protocol import (
    COUNT,
    ErrorKind,
    Message,
    ProtocolError,
    Tag,
    WorkerError,
    failed,
    pack,
    receive,
    send,
    unpack,
)
from gradviz.workers.table import (
    CLI_PRELOAD,
    HOOKS,
    PRELOAD,
    PROGRAM_JOBS,
    TEST_PROGRAM_JOBS,
)
from gradviz.workers.turns import Turns


@dataclass(frozen=True)
class SandboxLimits:
    # One worker keeps the whole app under 690 MB (docs/BENCHMARKS.md); set
    # GRADVIZ_WORKERS=2 or more on a host with memory to spare.
    workers: int = 1
    run_seconds: float = 20.0  # wall clock for one program run
    check_seconds: float = 60.0  # wall clock for one gradient check (many re-runs)
    memory_bytes: int = 900_000_000  # beyond a warm worker; above Limits.max_total_bytes + autograd
    max_jobs: int = 200  # a worker is replaced after this many jobs
    open_files: int = 64
    threads: int = 1
    queue_seconds: float = 60.0  # how long a request waits for a free worker
    start_seconds: float = 180.0  # first start imports torch in the forkserver
    # Worker-seconds one visitor may use per minute (None: no budget; public hosts set one).
    visitor_seconds_per_minute: float | None = None
    # One job's result: pickled (beyond it, not read at all), and once unpickled in this
    # process (util.plainsize; beyond it, not unpickled). Above what program.results'
    # cap_result lets a run's result take, which shrinks it before it gets here.
    result_bytes: int = 16_000_000
    decoded_bytes: int = 48_000_000
    # A worker whose resident memory grew this far beyond its start is replaced before its
    # next job (None: never), so every program finds about the same room.
    regrow_bytes: int | None = 64_000_000
    max_waiting: int = 256  # requests waiting in line, all visitors together (more: Busy)


def _reply_frame(message: Message, config: dict) -> bytes:
    """A job's reply framed as the parent reads it (protocol.pack); an error in its place
    when it is not plain data or is over the limits on one result."""
    try:
        frame, decoded = pack(message, config["decoded_bytes"])
    except (NotPlain, pickle.PicklingError, TypeError, AttributeError) as exc:
        error = WorkerError(
            ErrorKind.FAILED, f"the result could not be sent back: {str(exc)[:200]}"
        )
        return pack(failed(error, retire=True), config["decoded_bytes"])[0]
    if decoded > config["decoded_bytes"] or len(frame) > config["result_bytes"] + COUNT.size:
        text = (
            f"the result would take {fmt_bytes(len(frame) - COUNT.size)} to send and over "
            f"{fmt_bytes(decoded)} once read back, over the {fmt_bytes(config['result_bytes'])} "
            f"and {fmt_bytes(config['decoded_bytes'])} one result may take"
        )
        error = WorkerError(ErrorKind.RESULT, text)
        return pack(failed(error, retire=message.retire), config["decoded_bytes"])[0]
    return frame


HOOKS_CALLED = ("prepare", "state")


def _worker_main(conn, config: dict) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file write fails (EFBIG), no kill
    # Already imported in the forkserver (warm); if not, it warms up here, before limits.
    prepare, torch_state = (resolve(f"{HOOKS}:{n}") for n in HOOKS_CALLED)
    self_test = resolve(f"{HOOKS}:{config['self_test']}")
    prepare(config["threads"])
    limit_process(config)
    problem = self_test()
    if problem is not None:  # the caps do not hold under this worker's limits: fail closed
        send(conn, Message(Tag.BROKEN, error=WorkerError(ErrorKind.FAILED, problem)))
        return
    state = torch_state()
    release_memory()  # what the self-test left: the start is what a job finds
    start = resident(os.getpid())
    send(conn, Message(Tag.READY, start))
    tests = TEST_PROGRAM_JOBS if config["testing"] else None
    regrow = config["regrow_bytes"]
    while True:
        try:
            request = receive(conn)
        except (EOFError, OSError):
            return
        kind, args, cpu_seconds = request.value
        grown = resident(os.getpid()) - start  # measured here: after the last release_memory
        if regrow is not None and grown > regrow:
            # the parent runs the job in a fresh worker
            error = WorkerError(ErrorKind.GROWN, f"the worker grew by {fmt_bytes(grown)}")
            conn.send_bytes(_reply_frame(Message(Tag.ERROR, grown, error, True), config))
            return
        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = usage.ru_utime + usage.ru_stime
        set_limit(resource.RLIMIT_CPU, int(used + cpu_seconds) + 1)
        file_before = proc_status().get("RssFile", 0)
        peaks = reset_peak()
        value, error = None, None
        try:
            fn = job_function(kind, PROGRAM_JOBS, tests)
            value = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - reported, never raised in the parent
            error = WorkerError.of(exc, limit=500)
        dirty = torch_state() != state
        peak = peak_resident(file_before) - start if peaks else 0
        if peak > config["memory_bytes"]:
            # over the cap between two of the parent's samples: the same verdict as theirs
            value, dirty = peak, True
            error = WorkerError(ErrorKind.MEMORY, f"the job reached {fmt_bytes(peak)}")
        tag = Tag.DONE if error is None else Tag.ERROR
        conn.send_bytes(_reply_frame(Message(tag, value, error, dirty), config))
        del value
        if dirty:
            return  # the parent starts a fresh worker
        release_memory()  # after the reply (a full collection: ~0.1 s nobody waits for)


# ---------------------------------------------------------------- in the parent


@dataclass
class Outcome:
    status: str  # ok | error | died | timeout | memory (grown: only inside the pool) | result
    value: object = None
    message: str = ""
    decoded: int | None = None  # what value takes here, counted here (util.plainsize)
    fresh: bool = True  # the job ran in a worker that had run no job before it
    error: WorkerError | None = None  # what the worker said went wrong (status error)


def _outcome(message: Message, decoded: int) -> Outcome:
    """What the pool says of a worker's reply: a worker's error of kind memory, grown or
    result is an Outcome's status of its own; any other is "error"."""
    error = message.error
    if error is None:
        return Outcome("ok", message.value, decoded=decoded)
    if error.kind in (ErrorKind.MEMORY, ErrorKind.GROWN):
        return Outcome(error.kind.value, message.value, decoded=decoded, error=error)
    status = "result" if error.kind == ErrorKind.RESULT else "error"
    return Outcome(status, error.text(), error.text(), decoded, error=error)


class Worker:
    def __init__(self, ctx, config: dict):
        self.config = config
        self.conn, child = ctx.Pipe()
        self.proc = ForkserverProcess(target=_worker_main, args=(child, config), daemon=True)
        self.proc.start()
        child.close()
        self.pid = self.proc.pid
        self.baseline: int | None = None
        self.jobs = 0
        self.retire = False
        self.busy = False  # a job is running (read by tests and monitoring)
        self.problem = ""  # why the worker would not start, if it would not

    def wait_ready(self, timeout: float) -> bool:
        if self.baseline is not None:
            return True
        if not self.conn.poll(timeout):
            return False
        try:
            message = receive(self.conn)
        except (EOFError, OSError, ProtocolError):
            return False
        if message.tag != Tag.READY:
            self.problem = "" if message.error is None else message.error.message
            return False
        self.baseline = message.value
        return True

    def run(self, kind: str, args: tuple, seconds: float) -> Outcome:
        fresh = self.jobs == 0
        self.jobs += 1
        self.busy = True
        try:
            outcome = self._run(kind, args, seconds)
        finally:
            self.busy = False
        outcome.fresh = fresh
        return outcome

    def _run(self, kind: str, args: tuple, seconds: float) -> Outcome:
        cap = (self.baseline or 0) + self.config["memory_bytes"]
        try:
            send(self.conn, Message(Tag.REQUEST, (kind, args, seconds + 2)))
        except (OSError, ValueError) as exc:
            self.retire = True
            return Outcome("died", message=f"could not reach the worker: {exc}")
        deadline = time.monotonic() + seconds
        while True:
            try:
                if self.conn.poll(0.02):
                    return self._reply()
            except (EOFError, OSError):
                self.proc.join(2)
                self.retire = True
                return Outcome("died", message=signal_name(self.proc.exitcode))
            if not self.proc.is_alive():
                self.retire = True
                return Outcome("died", message=signal_name(self.proc.exitcode))
            used = resident(self.pid)
            if used > cap:
                self.kill()
                return Outcome("memory", used - (self.baseline or 0))
            if time.monotonic() > deadline:
                self.kill()
                return Outcome("timeout", seconds)

    def _reply(self) -> Outcome:
        """The worker's reply, read within the limits on what a result may take; a worker
        that sent more than they allow is retired."""
        limit = self.config["result_bytes"] + COUNT.size
        try:
            message = self.conn.recv_bytes(limit)
        except OSError as exc:  # longer than the limit: left unread in the pipe
            if "bad message length" not in str(exc):
                raise
            self.kill()
            return Outcome("result", message=f"the result was over {fmt_bytes(limit)}")
        try:
            reply = unpack(message, self.config["decoded_bytes"])
            # Counted again here, whatever the worker said: what the server keeps is bounded
            # by its own count (unpickling itself was bounded by the message's length).
            decoded = decoded_size(reply.value, limit=self.config["decoded_bytes"])
        except (pickle.UnpicklingError, ValueError, TypeError, EOFError, struct.error) as exc:
            self.kill()  # NotPlain is a ValueError
            return Outcome("result", message=f"the result could not be read back: {exc}")
        if decoded > self.config["decoded_bytes"]:
            self.kill()
            return Outcome("result", message=f"the result took over {fmt_bytes(decoded)} read back")
        self.retire = self.retire or reply.retire
        return _outcome(reply, decoded)

    def kill(self) -> None:
        self.retire = True
        if self.proc.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        self.proc.join(5)
        with contextlib.suppress(OSError):
            self.conn.close()

    def alive(self) -> bool:
        return self.proc.is_alive()


class Pool:
    """A fixed number of workers, shared by every session; thread-safe. Visitors take turns
    (gradviz.workers.turns): `call(..., visitor=key)` with one key per visitor, ADDRESS|ID."""

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        testing: bool = False,
        one_shot: bool = False,
    ):
        """one_shot: for one program in a short-lived process (the command line): the
        forkserver imports table.CLI_PRELOAD, not the app's warm-up, and workers run the
        quick self-test (gradviz.program.worker_hooks.quick_self_test)."""
        self.limits = limits or SandboxLimits()
        self.testing = testing
        self.ctx = forkserver_context(CLI_PRELOAD if one_shot else PRELOAD)
        self.config = {
            "threads": self.limits.threads,
            "open_files": self.limits.open_files,
            "memory_bytes": self.limits.memory_bytes,
            "result_bytes": self.limits.result_bytes,
            "decoded_bytes": self.limits.decoded_bytes,
            "regrow_bytes": self.limits.regrow_bytes,
            "testing": testing,
            "self_test": "quick_self_test" if one_shot else "self_test",
        }
        self.idle: queue.Queue[Worker] = queue.Queue()
        self.lock = threading.Lock()
        self.workers: set[Worker] = set()
        self.stats = {"jobs": 0, "replaced": 0, "died": 0, "timeout": 0, "memory": 0, "retried": 0}
        self.closed = False
        for _ in range(self.limits.workers):
            self.idle.put(self._spawn())
        self._queue = Turns(
            self.idle,
            self.limits.workers,
            self.limits.visitor_seconds_per_minute,
            self.limits.max_waiting,
        )
        self._anonymous = itertools.count()

    def _spawn(self) -> Worker:
        w = Worker(self.ctx, self.config)
        with self.lock:
            self.workers.add(w)
        return w

    def _replace(self, w: Worker) -> Worker:
        w.kill()
        with self.lock:
            self.workers.discard(w)
            self.stats["replaced"] += 1
        return self._spawn()

    def busy_pids(self) -> list[int]:
        with self.lock:
            return [w.pid for w in self.workers if w.busy and w.alive()]

    def pids(self) -> list[int]:
        with self.lock:
            return [w.pid for w in self.workers if w.alive()]

    def call(
        self,
        kind: str,
        args: tuple,
        seconds: float,
        visitor: str = "",
        out_of_memory: Callable[[Outcome], bool] | None = None,
    ) -> Outcome:
        """Run one job in a worker when `visitor`'s turn comes (Busy when it does not come
        within queue_seconds, or the visitor's budget is used); "" is a visitor of its own.

        A job that meets the memory cap (the watchdog's "memory", or what `out_of_memory`
        says of a finished job, such as an allocator failure the job reported) in a worker
        that had run other jobs runs again, once, in a fresh worker, in the same turn: its
        verdict is then the program's own, not what earlier visitors left in the worker."""
        if self.closed:
            raise RuntimeError("the worker pool is closed")
        if kind not in PROGRAM_JOBS and not (self.testing and kind in TEST_PROGRAM_JOBS):
            raise ValueError(f"unknown job {kind!r}")
        visitor = visitor or f"anonymous {next(self._anonymous)}"
        w = self._queue.take(visitor, self.limits.queue_seconds)
        ran = 0.0  # the visitor's worker time (not a worker's start)
        try:
            while True:
                if not w.alive() or not w.wait_ready(self.limits.start_seconds):
                    w = self._replace(w)
                    if not w.wait_ready(self.limits.start_seconds):
                        return Outcome("error", message=f"a worker could not start {w.problem}")
                started = time.monotonic()
                outcome = w.run(kind, args, seconds)
                ran += time.monotonic() - started
                if outcome.status == "grown":  # replaced before it ran anything
                    w = self._replace(w)
                    continue
                refused = outcome.status == "memory"
                refused = refused or (out_of_memory is not None and out_of_memory(outcome))
                with self.lock:
                    self.stats["jobs"] += 1
                    if outcome.status in ("died", "timeout", "memory"):
                        self.stats[outcome.status] += 1
                    if refused and not outcome.fresh:
                        self.stats["retried"] += 1
                if refused and not outcome.fresh:
                    w = self._replace(w)  # the cap was met in a used worker: again, fresh
                    continue
                if w.retire or w.jobs >= self.limits.max_jobs or not w.alive():
                    w = self._replace(w)
                return outcome
        except BaseException:
            w = self._replace(w)
            raise
        finally:
            self._queue.give_back(visitor, w, ran)

    def close(self) -> None:
        self.closed = True
        with self.lock:
            workers = list(self.workers)
            self.workers.clear()
        for w in workers:
            w.kill()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
