"""Run user programs outside the server process: a small pool of warm, limited workers.

The interpreter (gradviz.run) already refuses anything outside the language and checks
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
  shared resident memory, read from /proc), kills the worker when either is passed,
  turns the death into a Trace with a clear error, and starts a fresh worker. Workers
  are recycled after a number of jobs, and at once if torch's global state in them
  (default dtype and device, threads, grad mode, the global RNG) is not as it started.
- Jobs are a fixed table of core functions (run a program, check gradients). Test-only
  jobs (crash, hang, allocate) exist only in pools made with testing=True; program
  text cannot choose a job.

No Streamlit here. `run_isolated` and `check_isolated` are what the pages call; with
GRADVIZ_SANDBOX=off they run in-process (the CLI too, or with its --no-sandbox).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from dataclasses import dataclass, replace
from multiprocessing import forkserver, popen_forkserver, reduction, spawn, util
from multiprocessing.context import set_spawning_popen

from gradviz.lang import (
    DEFAULT_LIMITS,
    PUBLIC_PROGRAM_LIMITS,
    Limits,
    ProgramError,
    fmt_bytes,
    parse,
    tightest,
)

PRELOAD = ["gradviz.sandbox_preload"]  # torch, gradviz and torchviz, then gc.freeze()


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
    # Caps every program run here gets, whatever the caller asks (public hosts: smaller).
    program: Limits = DEFAULT_LIMITS


class Busy(RuntimeError):
    """Every worker stayed busy for longer than the queue allows, or the visitor is over
    their share (a program of theirs still running, or their budget of worker time used)."""


# ---------------------------------------------------------------- inside a worker


def _proc_status(pid: int | str = "self") -> dict[str, int]:
    """Sizes in bytes from /proc/PID/status (VmData, VmRSS, RssAnon, RssShmem, ...)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if len(parts) == 2 and parts[1] == "kB":
                    out[key] = int(parts[0]) * 1024
    except OSError:
        pass
    return out


def _resident(pid: int) -> int:
    """Memory a program can grow: anonymous plus shared-memory resident pages."""
    s = _proc_status(pid)
    return s.get("RssAnon", 0) + s.get("RssShmem", 0)


def torch_state() -> tuple:
    """Process-wide torch state a program must not be able to change."""
    import torch

    return (
        str(torch.get_default_dtype()),
        str(torch.get_default_device()),
        torch.get_num_threads(),
        torch.is_grad_enabled(),
        torch.are_deterministic_algorithms_enabled(),
        bytes(torch.get_rng_state().numpy().tobytes()),
    )


def _limit(which: int, soft: int, hard: int | None = None) -> None:
    import resource

    cur_soft, cur_hard = resource.getrlimit(which)
    if hard is None:
        hard = cur_hard
    if cur_hard != resource.RLIM_INFINITY:
        soft = min(soft, cur_hard)
        hard = min(hard, cur_hard) if hard != resource.RLIM_INFINITY else cur_hard
    resource.setrlimit(which, (soft, hard))


def _job_run(source, options):
    from gradviz.run import run_program
    from gradviz.trace import cap_result

    # What goes back to the server is bounded here, in the worker (tensors with values,
    # values in all, bytes pickled), with a note in trace.summary of what was left out.
    return cap_result(run_program(source, options))


def _job_check(source, target, shown, options, ones):
    from gradviz.check import check_gradients

    return check_gradients(source, target, shown, options, ones=ones)


def _test_crash():
    import ctypes

    ctypes.string_at(0)  # a real SIGSEGV: read address 0


def _test_hang(seconds: float = 3600.0, spin: bool = False):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not spin:
            time.sleep(0.05)


TEST_STEP = 32 * 1024 * 1024


def _hold_memory(nbytes: int, shared: bool) -> list:
    """Grow memory in steps of TEST_STEP and hold it. Private memory meets RLIMIT_DATA; shared
    memory the watchdog. (Test-only jobs here and in gradviz.jobs.)"""
    import mmap

    held = []
    for _ in range(0, nbytes, TEST_STEP):
        if shared:
            m = mmap.mmap(-1, TEST_STEP)  # MAP_SHARED | MAP_ANONYMOUS: outside RLIMIT_DATA
            for i in range(0, TEST_STEP, 4096):
                m[i] = 1
            held.append(m)
        else:
            held.append(bytearray(b"\1" * TEST_STEP))
        time.sleep(0.01)
    return held


def _test_allocate(nbytes: int, shared: bool):
    return len(_hold_memory(nbytes, shared)) * TEST_STEP


def _test_pid():
    return os.getpid()


def _test_dirty():
    import torch

    torch.set_default_dtype(torch.float64)
    return torch_state()


JOBS = {"run": _job_run, "check": _job_check}
TEST_JOBS = {
    "crash": _test_crash,
    "hang": _test_hang,
    "allocate": _test_allocate,
    "pid": _test_pid,
    "state": torch_state,
    "dirty": _test_dirty,
}


def _release_memory() -> None:
    """Give freed memory back to the system between jobs (keeps idle workers small)."""
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


# Must be refused by the FLOP cap; checked by every worker under its limits before serving.
CANARY = "a = torch.ones(4000, 4000)\nb = a @ a\n"


def limit_self(config: dict) -> None:
    """Torch threads, no core files, no file writes, few open files, a data-segment cap.

    config: threads, open_files, memory_bytes (allowed beyond what the process uses now).
    Also used by the on-demand job workers (gradviz.jobs).
    """
    import resource

    import torch

    torch.set_num_threads(config["threads"])
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)
    _limit(resource.RLIMIT_CORE, 0, 0)
    _limit(resource.RLIMIT_FSIZE, 0, 0)
    _limit(resource.RLIMIT_NOFILE, config["open_files"], config["open_files"])
    baseline = _proc_status()
    data_cap = baseline.get("VmData", 0) + config["memory_bytes"]
    _limit(resource.RLIMIT_DATA, data_cap, data_cap)


def _worker_main(conn, config: dict) -> None:
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file write fails (EFBIG), no kill
    # Already imported in the forkserver (warm); if not, it warms up here, before limits.
    import gradviz.sandbox_preload  # noqa: F401

    limit_self(config)
    jobs = dict(JOBS, **(TEST_JOBS if config["testing"] else {}))
    from gradviz.run import RunOptions

    canary = _job_run(CANARY, RunOptions(classic=False)).error or {}
    if "floating-point operations" not in canary.get("message", ""):
        # The caps do not hold under this worker's limits: serve nothing (fail closed).
        conn.send(("broken", os.getpid(), f"the size checks failed their self-test: {canary}"))
        return
    state = torch_state()
    conn.send(("ready", os.getpid(), _resident(os.getpid())))
    while True:
        try:
            kind, args, cpu_seconds = conn.recv()
        except (EOFError, OSError):
            return
        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = usage.ru_utime + usage.ru_stime
        _limit(resource.RLIMIT_CPU, int(used + cpu_seconds) + 1)
        try:
            fn = jobs[kind]
            reply = ("ok", fn(*args))
        except BaseException as exc:  # noqa: BLE001 - reported, never raised in the parent
            reply = ("error", f"{type(exc).__name__}: {str(exc)[:500]}")
        dirty = torch_state() != state
        _release_memory()
        try:
            conn.send((*reply, dirty))
        except Exception as exc:  # an unpicklable result
            conn.send(("error", f"the result could not be sent back: {exc}", True))
        if dirty:
            return  # the parent starts a fresh worker


# ---------------------------------------------------------------- in the parent


@dataclass
class Outcome:
    status: str  # ok | error | died | timeout | memory
    value: object = None
    message: str = ""


def _signal_name(code: int | None) -> str:
    if code is None or code >= 0:
        return f"exit status {code}"
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


class _Popen(popen_forkserver.Popen):
    """The forkserver's Popen without re-importing the parent's __main__ in the worker.

    multiprocessing runs the parent's main module again in every child. Under Streamlit
    that module is the app script (Streamlit puts it in sys.modules["__main__"]), which a
    worker must never run; under pytest it is pytest. Workers need only gradviz, which
    the forkserver has preloaded, so the main-module keys are left out of the data sent.
    """

    def _launch(self, process_obj):
        prep_data = spawn.get_preparation_data(process_obj._name)
        for key in ("init_main_from_path", "init_main_from_name", "main_path"):
            prep_data.pop(key, None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Process(mp.context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


class Worker:
    def __init__(self, ctx, config: dict):
        self.config = config
        self.conn, child = ctx.Pipe()
        self.proc = _Process(target=_worker_main, args=(child, config), daemon=True)
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
            tag, _pid, resident = self.conn.recv()
        except (EOFError, OSError):
            return False
        if tag != "ready":
            self.problem = resident
            return False
        self.baseline = resident
        return True

    def run(self, kind: str, args: tuple, seconds: float) -> Outcome:
        self.jobs += 1
        self.busy = True
        try:
            return self._run(kind, args, seconds)
        finally:
            self.busy = False

    def _run(self, kind: str, args: tuple, seconds: float) -> Outcome:
        cap = (self.baseline or 0) + self.config["memory_bytes"]
        try:
            self.conn.send((kind, args, seconds + 2))
        except (OSError, ValueError) as exc:
            self.retire = True
            return Outcome("died", message=f"could not reach the worker: {exc}")
        deadline = time.monotonic() + seconds
        while True:
            try:
                if self.conn.poll(0.02):
                    status, value, dirty = self.conn.recv()
                    self.retire = self.retire or dirty
                    return Outcome(status, value, value if status == "error" else "")
            except (EOFError, OSError):
                self.proc.join(2)
                self.retire = True
                return Outcome("died", message=_signal_name(self.proc.exitcode))
            if not self.proc.is_alive():
                self.retire = True
                return Outcome("died", message=_signal_name(self.proc.exitcode))
            resident = _resident(self.pid)
            if resident > cap:
                self.kill()
                return Outcome("memory", resident - (self.baseline or 0))
            if time.monotonic() > deadline:
                self.kill()
                return Outcome("timeout", seconds)

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


def _forkserver_can_import_gradviz() -> None:
    """Python 3.11's forkserver ignores the parent's sys.path: give it gradviz's by env."""
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if src not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([src, *paths])


def forkserver_context():
    """The multiprocessing context whose forkserver has torch and gradviz imported.

    One forkserver serves the pool's warm workers and the on-demand job workers alike.
    """
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    _forkserver_can_import_gradviz()
    return ctx


class _Queue:
    """Who gets the next free worker: visitors take turns, with one program in flight each.

    A request waits in its visitor's line; a free worker goes to the head of the line of the
    visitor served least recently among those with no program running. So three tabs of one
    visitor (one key) run one program at a time, and another visitor's program runs after at
    most one of theirs. A request with no visitor key is a visitor of its own.
    """

    WINDOW = 60.0  # seconds over which a visitor's worker time is counted

    def __init__(self, idle: queue.Queue, budget: float | None):
        self.idle = idle
        self.budget = budget
        self.cond = threading.Condition()
        self.lines: dict[str, list[object]] = {}  # visitor -> waiting tickets, oldest first
        self.running: dict[str, int] = {}
        self.served: dict[str, float] = {}  # visitor -> when last given a worker
        self.used: dict[str, list[tuple[float, float]]] = {}  # visitor -> (ended, seconds)

    def _next(self) -> object | None:
        ready = [v for v, line in self.lines.items() if line and not self.running.get(v)]
        if not ready:
            return None
        first = min(ready, key=lambda v: self.served.get(v, float("-inf")))
        return self.lines[first][0]

    def used_seconds(self, visitor: str, now: float) -> float:
        spans = [(end, sec) for end, sec in self.used.get(visitor, ()) if end > now - self.WINDOW]
        self.used[visitor] = spans
        return sum(sec for _, sec in spans)

    def take(self, visitor: str, timeout: float) -> Worker:
        """A free worker for `visitor` when their turn comes; Busy after `timeout` s."""
        ticket = object()
        end = time.monotonic() + timeout
        with self.cond:
            if self.budget is not None:
                used = self.used_seconds(visitor, time.monotonic())
                if used >= self.budget:
                    wait = self.used[visitor][0][0] + self.WINDOW - time.monotonic()
                    raise Busy(
                        f"you have used {used:.0f} s of the shared program runner in the last "
                        f"minute, the most one visitor may use ({self.budget:.0f} s) on this "
                        f"public server; run it again in about {max(1, round(wait))} s"
                    )
            self.lines.setdefault(visitor, []).append(ticket)
            try:
                while True:
                    if self._next() is ticket and not self.idle.empty():
                        w = self.idle.get_nowait()
                        self.running[visitor] = self.running.get(visitor, 0) + 1
                        self.served[visitor] = time.monotonic()
                        return w
                    left = end - time.monotonic()
                    if left <= 0:
                        raise Busy(self._busy_message(visitor, timeout))
                    self.cond.wait(min(left, 0.5))
            finally:
                line = self.lines[visitor]
                line.remove(ticket)
                if not line:
                    del self.lines[visitor]
                self.cond.notify_all()

    def _busy_message(self, visitor: str, timeout: float) -> str:
        if self.running.get(visitor):
            return (
                "you have a program running in another tab or window; programs of one visitor "
                f"run one at a time, and this one waited {timeout:.0f} s for it. Wait for it "
                "to finish (or close the other tab), then run this one again"
            )
        return (
            f"every worker stayed busy for {timeout:.0f} s; "
            "the server is under heavy load, try again in a moment"
        )

    def give_back(self, visitor: str, w: Worker, seconds: float) -> None:
        with self.cond:
            self.idle.put(w)
            self.running[visitor] -= 1
            if not self.running[visitor]:
                del self.running[visitor]
            now = time.monotonic()
            if self.budget is not None:
                self.used.setdefault(visitor, []).append((now, seconds))
                for v in list(self.used):  # forget who has not run anything for a minute
                    if not self.used_seconds(v, now):
                        del self.used[v]
            if not self.lines.get(visitor) and not self.running.get(visitor):
                del self.served[visitor]  # nothing waiting: no turn to remember
            self.cond.notify_all()


class Pool:
    """A fixed number of workers, shared by every session; thread-safe. Visitors take turns
    (see _Queue): `call(..., visitor=key)` with one key per visitor (the page's client)."""

    def __init__(self, limits: SandboxLimits | None = None, testing: bool = False):
        self.limits = limits or SandboxLimits()
        self.testing = testing
        self.ctx = forkserver_context()
        self.config = {
            "threads": self.limits.threads,
            "open_files": self.limits.open_files,
            "memory_bytes": self.limits.memory_bytes,
            "testing": testing,
        }
        self.idle: queue.Queue[Worker] = queue.Queue()
        self.lock = threading.Lock()
        self.workers: set[Worker] = set()
        self.stats = {"jobs": 0, "replaced": 0, "died": 0, "timeout": 0, "memory": 0}
        self.closed = False
        for _ in range(self.limits.workers):
            self.idle.put(self._spawn())
        self._queue = _Queue(self.idle, self.limits.visitor_seconds_per_minute)
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

    def call(self, kind: str, args: tuple, seconds: float, visitor: str = "") -> Outcome:
        """Run one job in a worker when `visitor`'s turn comes (Busy when it does not come
        within queue_seconds, or the visitor's budget is used); "" is a visitor of its own."""
        if self.closed:
            raise RuntimeError("the worker pool is closed")
        if kind not in JOBS and not (self.testing and kind in TEST_JOBS):
            raise ValueError(f"unknown job {kind!r}")
        visitor = visitor or f"anonymous {next(self._anonymous)}"
        w = self._queue.take(visitor, self.limits.queue_seconds)
        ran = 0.0  # the visitor's worker time (not a worker's start)
        try:
            if not w.alive() or not w.wait_ready(self.limits.start_seconds):
                w = self._replace(w)
                if not w.wait_ready(self.limits.start_seconds):
                    return Outcome("error", message=f"a worker could not start {w.problem}")
            started = time.monotonic()
            outcome = w.run(kind, args, seconds)
            ran = time.monotonic() - started
            with self.lock:
                self.stats["jobs"] += 1
                if outcome.status in ("died", "timeout", "memory"):
                    self.stats[outcome.status] += 1
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


# ---------------------------------------------------------------- what pages call

_default: Pool | None = None
# On a public host, worker-seconds one visitor may use per minute (GRADVIZ_VISITOR_SECONDS):
# two thirds of one worker, so that others always find room beside the busiest visitor.
PUBLIC_VISITOR_SECONDS = 40.0
# On a public host, memory one program may use beyond a warm worker (GRADVIZ_WORKER_MEMORY):
# above PUBLIC_PROGRAM_LIMITS' 200 MB of tensors plus autograd's bookkeeping, and low
# enough that the whole app stays under 690 MB (docs/BENCHMARKS.md).
PUBLIC_WORKER_MEMORY = 300_000_000
_default_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get("GRADVIZ_SANDBOX", "on").lower() not in ("off", "0", "false", "no")


def default_pool() -> Pool:
    """The process's pool, started on first use (the UI keeps it for the server's life)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            from gradviz.host import public_mode

            env = os.environ.get
            public = public_mode()
            budget = float(env("GRADVIZ_VISITOR_SECONDS", PUBLIC_VISITOR_SECONDS))
            memory = PUBLIC_WORKER_MEMORY if public else SandboxLimits.memory_bytes
            _default = Pool(
                SandboxLimits(
                    workers=max(1, int(env("GRADVIZ_WORKERS", SandboxLimits.workers))),
                    run_seconds=float(env("GRADVIZ_RUN_SECONDS", SandboxLimits.run_seconds)),
                    memory_bytes=int(env("GRADVIZ_WORKER_MEMORY", memory)),
                    visitor_seconds_per_minute=budget if public and budget > 0 else None,
                    program=PUBLIC_PROGRAM_LIMITS if public else DEFAULT_LIMITS,
                )
            )
        return _default


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
            f"the program used {fmt_bytes(outcome.value)} of memory; the limit is "
            f"{fmt_bytes(memory_bytes)}. It was stopped; nothing else was affected.",
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
            details={"worker": how},
        )
    return ProgramError("internal", f"the program runner failed: {outcome.message}")


def _out_of_memory(trace, memory_bytes: int):
    """torch's allocator failing at the worker's RLIMIT_DATA, said as the cap it is."""
    err = trace.error
    if err and err.get("kind") == "runtime" and "can't allocate memory" in err.get("message", ""):
        err.update(
            kind="limit",
            message=f"the program needs more memory than one run may use ({fmt_bytes(memory_bytes)} "
            "beyond the runner's own); it was refused at this line, nothing else was affected",
            hint="Use smaller tensors.",
            details={},
        )
    return trace


def run_isolated(
    source, options=None, pool: Pool | None = None, raise_busy: bool = False, visitor: str = ""
):
    """run_program in a worker: always a Trace, never an exception (except Busy on request).

    The server side needs no torch: text that is not a string, or too long, is refused here
    by the parser's own checks, and everything else is run by a worker. `visitor` names who
    asks (one key for all tabs of one visitor, if the page can tell): visitors take turns."""
    from gradviz.trace import RunOptions, Trace

    options = options or RunOptions()
    if not enabled() and pool is None:
        from gradviz.run import run_program

        return run_program(source, options)
    if not isinstance(source, str) or len(source) > options.limits.max_source_chars:
        try:  # refused before anything runs: wrong type, size
            parse(source, options.limits)
        except ProgramError as exc:
            text = source if isinstance(source, str) else ""
            return Trace(source=text, error=exc.to_dict(), stats={"seconds": 0.0})
    pool = pool or default_pool()
    options = replace(options, limits=tightest(options.limits, pool.limits.program))
    seconds = pool.limits.run_seconds
    started = time.perf_counter()
    try:
        outcome = pool.call("run", (source, options), seconds, visitor)
    except Busy as exc:
        if raise_busy:
            raise
        outcome = Outcome("error", message=str(exc))
    if outcome.status == "ok":
        return _out_of_memory(outcome.value, pool.limits.memory_bytes)
    err = describe(outcome, seconds, pool.limits.memory_bytes)
    return Trace(
        source=source,
        error=err.to_dict(),
        stats={"seconds": time.perf_counter() - started, "worker": outcome.status},
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
    from gradviz.trace import GradCheckResult, RunOptions

    if not enabled() and pool is None:
        from gradviz.check import check_gradients

        return check_gradients(source, target, shown, options, ones=ones)
    if not isinstance(source, str) or len(source) > DEFAULT_LIMITS.max_source_chars:
        return GradCheckResult(False, "The program must be text within the size limit.")
    pool = pool or default_pool()
    options = options or RunOptions()
    options = replace(options, limits=tightest(options.limits, pool.limits.program))
    seconds = pool.limits.check_seconds
    try:
        outcome = pool.call("check", (source, target, shown, options, ones), seconds, visitor)
    except Busy as exc:
        return GradCheckResult(False, f"Could not check now: {exc}.")
    if outcome.status == "ok":
        return outcome.value
    err = describe(outcome, seconds, pool.limits.memory_bytes)
    return GradCheckResult(False, f"The gradient check was stopped: {err.message}")
