"""What every worker process shares: how it is started (from one forkserver that has
imported torch and gradviz, without re-running the parent's __main__), how it limits itself
(rlimits), what it uses (/proc), how a job is found by name (gradviz.workers.table), and
the work that runs there. No torch here: the worker-side hooks that need it are named in the table.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import io
import multiprocessing as mp
import os
import resource
import signal
from collections.abc import Callable, Mapping
from multiprocessing import forkserver, popen_forkserver, reduction, spawn, util
from multiprocessing.context import set_spawning_popen
from pathlib import Path

from gradviz.util import settings
from gradviz.workers.table import PRELOAD


def enabled() -> bool:
    """Whether work runs in worker processes (GRADVIZ_SANDBOX=off: in this process)."""
    return settings.flag("GRADVIZ_SANDBOX")


def proc_status(pid: int | str = "self") -> dict[str, int]:
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


def resident(pid: int) -> int:
    """Memory a program can grow: anonymous plus shared-memory resident pages."""
    s = proc_status(pid)
    return s.get("RssAnon", 0) + s.get("RssShmem", 0)


def reset_peak() -> bool:
    """Start this process's peak resident size (VmHWM) again from what it holds now; False
    where the kernel does not allow it (then peak_resident means nothing)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def peak_resident(file_before: int) -> int:
    """The most anonymous plus shared memory this process held since reset_peak, never
    more: its peak resident size less the file pages it holds (the larger of now and
    `file_before`, RssFile at the reset; file pages only grow in a job, unless evicted)."""
    s = proc_status()
    return s.get("VmHWM", 0) - max(s.get("RssFile", 0), file_before)


def set_limit(which: int, soft: int, hard: int | None = None) -> None:
    cur_soft, cur_hard = resource.getrlimit(which)
    if hard is None:
        hard = cur_hard
    if cur_hard != resource.RLIM_INFINITY:
        soft = min(soft, cur_hard)
        hard = min(hard, cur_hard) if hard != resource.RLIM_INFINITY else cur_hard
    resource.setrlimit(which, (soft, hard))


# How deep the worker's main stack may grow. Freeing a long autograd chain whose nodes have
# Python objects (every node the run drew or read) recurses through each node in C++: 8 MB
# (the usual default) ends in a segfault at about 40,000 nodes, a loop of `y = y * 2`. The
# kernel leaves at least 128 MB below the stack of a process it started, so a forked worker
# can grow this far; the pages are counted in the worker's memory like any other.
STACK_BYTES = 112 * 2**20


def limit_process(config: dict) -> None:
    """No core files, no file writes, few open files, a data-segment cap, a deep stack.

    config: open_files, memory_bytes (allowed beyond what the process uses now)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    if soft != resource.RLIM_INFINITY and soft < STACK_BYTES:
        set_limit(resource.RLIMIT_STACK, STACK_BYTES)
    set_limit(resource.RLIMIT_CORE, 0, 0)
    set_limit(resource.RLIMIT_FSIZE, 0, 0)
    set_limit(resource.RLIMIT_NOFILE, config["open_files"], config["open_files"])
    baseline = proc_status()
    data_cap = baseline.get("VmData", 0) + config["memory_bytes"]
    set_limit(resource.RLIMIT_DATA, data_cap, data_cap)


def release_memory() -> None:
    """Give freed memory back to the system between jobs (keeps idle workers small)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def signal_name(code: int | None) -> str:
    if code is None or code >= 0:
        return f"exit status {code}"
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def resolve(name: str) -> Callable:
    """A "module:function" of the job table, imported (in the worker)."""
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


def job_function(kind: str, table: Mapping[str, str], tests: Mapping[str, str] | None) -> Callable:
    """The function behind a job kind; test-only kinds only where `tests` is given."""
    names = dict(table, **(tests or {}))
    return resolve(names[kind])


class ForkserverPopen(popen_forkserver.Popen):
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


class ForkserverProcess(mp.context.ForkServerProcess):
    """A forkserver child that does not run the parent's __main__ again (ForkserverPopen)."""

    @staticmethod
    def _Popen(process_obj):
        return ForkserverPopen(process_obj)


def _forkserver_can_import_gradviz() -> None:
    """Python 3.11's forkserver ignores the parent's sys.path: give it gradviz's by env."""
    src = str(Path(__file__).resolve().parents[2])
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if src not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([src, *paths])


def forkserver_context(preload: tuple[str, ...] = PRELOAD):
    """The multiprocessing context whose forkserver has imported `preload` (table.PRELOAD:
    torch and gradviz, warmed up). One forkserver serves the pool's warm workers and the job
    workers alike; the process's first start fixes what it preloads."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(list(preload))
    _forkserver_can_import_gradviz()
    return ctx


def start_forkserver(preload: tuple[str, ...] = PRELOAD) -> None:
    """Start the forkserver now, without waiting for it: its imports (torch) run while the
    caller does its own work; the first worker is forked when they are done. A pool made
    later uses this forkserver (what it preloads is fixed here)."""
    forkserver_context(preload)
    forkserver.ensure_running()


def forkserver_pid() -> int | None:
    """The pid of this process's forkserver, if it started one."""
    return getattr(forkserver._forkserver, "_forkserver_pid", None)


def stop_forkserver() -> None:
    """End this process's forkserver now (SIGKILL), for a short-lived process about to exit
    (the command line; its workers are already gone). Left alone it would see its parent go
    and exit by itself, but a Python that has imported torch takes 0.2 to 0.4 s to shut down,
    holding the command's output pipes open (a shell pipeline waits for it) and a core."""
    pid = forkserver_pid()
    if pid is None:
        return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
