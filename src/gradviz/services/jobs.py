"""Running a heavy job for a page or the CLI: wait in line for a slot, start the worker, read
what it sends, end it. The Speed, Training and Devices pages and services.host call these;
none of them repeats the wait / start / poll / stop steps.

- `start_in_line(kind, args, limits, slot_name, queue_s, on_wait)`: wait up to `queue_s` for
  a free slot of that name (Busy after that), then start the job holding it.
- `run_now(...)`: a short job to its end, now or not at all (Busy when its slot is taken).
- `follow(job, since, poll_s, connected)`: batches of new events until the job has ended and
  every event is read; ends the job when `connected()` says its page has gone.
- `end(job)`: stop a job that is still running (Stop, a rerun, a failure): it is asked to
  stop, and killed workers.jobs.STOP_GRACE_S later.
- `error_kind(job)`: the kind of the error a job ended with, what a page branches on.

No torch and no Streamlit here; the jobs themselves are gradviz.workers.table's. Workers are
started through the module (jobs.start), so tests can put a test-only job in a page's place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gradviz.util.busy import Busy
from gradviz.workers import jobs
from gradviz.workers.jobs import STOP_GRACE_S, Job, JobLimits


class JobFailed(Exception):
    """A job ended without a result; the message says why in one plain sentence."""


OnWait = Callable[[int, int, int], None]  # (running, ahead of you, slots in all)


def start_in_line(
    kind: str,
    args: tuple,
    limits: JobLimits,
    slot_name: str,
    queue_s: float,
    on_wait: OnWait | None = None,
    *,
    testing: bool = False,
) -> Job:
    """Wait for a slot of `slot_name` (telling `on_wait` who is ahead), then start the job.

    Raises Busy when no slot frees within `queue_s`; the slot goes back when the job ends."""
    slot = jobs.slots(slot_name)
    told = None if on_wait is None else (lambda running, ahead: on_wait(running, ahead, slot.size))
    slot.acquire(queue_s, on_wait=told)
    return jobs.start(kind, args, limits, slot, testing=testing)


def run_now(
    kind: str,
    args: tuple,
    limits: JobLimits,
    slot_name: str | None,
    what: str,
    busy: str = "",
    *,
    testing: bool = False,
):
    """A short job run to its end, now or not at all: its result; JobFailed naming `what`
    when it ends without one. With `slot_name`, in a free slot of that name (Busy(busy) when
    it is taken); with None, without a slot (small, light questions such as host facts)."""
    slot = None
    if slot_name is not None:
        slot = jobs.slots(slot_name)
        if not slot.try_acquire():
            raise Busy(busy)
    job = jobs.start(kind, args, limits, slot, testing=testing)
    job.wait(limits.seconds + 10.0)
    if job.status != "done":
        raise JobFailed(job.describe_failure(what))
    return job.result


def end(job: Job) -> None:
    """Stop `job` if it still runs (it is killed STOP_GRACE_S after the request)."""
    if not job.finished:
        job.stop(grace=STOP_GRACE_S)


def error_kind(job: Job) -> str:
    """The kind of the error `job` raised (a gradviz.workers.protocol.ErrorKind value: "data",
    "checkpoint", "value", "device_memory", ...), or "" when it did not end with one."""
    return job.error.kind.value if job.status == "error" and job.error is not None else ""


def follow(
    job: Job, since: int, poll_s: float, connected: Callable[[], bool] = lambda: True
) -> Iterator[list]:
    """The job's events after the first `since`, in batches, until it has ended and all are
    read. A batch may be empty (nothing new within `poll_s`): a page redraws then, which is
    where Streamlit can stop a script. When nothing is new and `connected()` is False (the
    page's tab has closed), the job is ended and the stream stops."""
    while not (job.finished and since >= len(job.events)):
        new = job.next_events(since, poll_s)
        if not new and not connected():
            end(job)
            return
        since += len(new)
        yield new
