"""Jobs that exist only for the tests (pools and jobs made with testing=True): crash, hang,
allocate, fail, write. Program text cannot choose a job; these are never in a production
table (gradviz.workers.table names them only under TEST_*)."""

from __future__ import annotations

import ctypes
import mmap
import os
import time


def pool_crash():
    ctypes.string_at(0)  # a real SIGSEGV: read address 0


def pool_hang(seconds: float = 3600.0, spin: bool = False):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not spin:
            time.sleep(0.05)


TEST_STEP = 32 * 1024 * 1024


def hold_memory(nbytes: int, shared: bool) -> list:
    """Grow memory in steps of TEST_STEP and hold it. Private memory meets RLIMIT_DATA; shared
    memory the watchdog. (Test-only jobs here and in gradviz.workers.jobs.)"""
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


def pool_allocate(nbytes: int, shared: bool):
    return len(hold_memory(nbytes, shared)) * TEST_STEP


def pool_spike(nbytes: int):
    """Touch `nbytes` of shared memory at once and let it go: a peak that can come and go
    between two of the parent's samples."""
    m = mmap.mmap(-1, nbytes)
    buf = (ctypes.c_char * nbytes).from_buffer(m)
    ctypes.memset(buf, 1, nbytes)
    del buf
    m.close()
    return nbytes


_KEPT: list = []


def pool_keep(nbytes: int):
    """Hold `nbytes` of private memory after the job ends, as allocator fragmentation or a
    library's cache would: the worker is then bigger than when it started."""
    _KEPT.extend(hold_memory(nbytes, False))
    return len(_KEPT) * TEST_STEP


def pool_pid():
    return os.getpid()


def pool_dirty():
    import torch

    torch.set_default_dtype(torch.float64)
    return (str(torch.get_default_dtype()),)  # the worker's state check then retires it


def job_count(n: int, pause: float = 0.0, *, should_stop):
    """Yield 0..n-1, stopping early on request; return how many were yielded."""
    done = 0
    for i in range(n):
        if should_stop():
            break
        yield i
        done += 1
        time.sleep(pause)
    return done


def job_crash(*args, should_stop):
    """A real SIGSEGV before any event (takes and ignores any job's arguments)."""
    ctypes.string_at(0)
    yield  # a generator, like every job


def job_hang(*args, should_stop):
    """Never ends and never reads stop requests (takes and ignores any job's arguments)."""
    while True:
        time.sleep(0.05)
    yield


def job_allocate(nbytes: int, shared: bool, *, should_stop):
    held = hold_memory(nbytes, shared)
    yield len(held)
    return len(held) * TEST_STEP


def job_fail(message: str, *args, should_stop):
    """Raise ValueError(message) before any event (takes and ignores further arguments)."""
    raise ValueError(message)
    yield


def job_threads(*, should_stop):
    import torch

    yield os.getpid()
    return torch.get_num_threads()


def job_write(path: str, *, should_stop):
    yield "writing"
    with open(path, "wb") as f:
        f.write(b"x" * 1024)
    return "written"
