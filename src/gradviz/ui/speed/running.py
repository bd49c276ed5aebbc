"""The Speed page's timings in a worker: the quick estimate (`calibration`), a run drawn as it
goes and kept in session state after every step (`run_in_worker`, followed through
gradviz.services.following), and a rerun's Stop keeping what was measured
(`stop_running_job`). What the server can know of free memory before a run.
"""

from __future__ import annotations

from dataclasses import asdict

import streamlit as st

from gradviz.services import host
from gradviz.services.following import Followed
from gradviz.services.jobs import JobFailed, error_kind, run_now, start_in_line
from gradviz.speed import memory, timing, workloads
from gradviz.speed.measured import MeasurementSet
from gradviz.ui.common import tab_open
from gradviz.util import resources
from gradviz.util.mdtext import message

SWEEP_KEY = "speed_sweep"
COMPARE_KEY = "speed_compare"
JOB_KEY = "speed_job"  # the worker job of this session still running, if any
QUEUE_S = 30.0  # how long a run waits for another visitor's timing to finish
CALIBRATION_TTL_S = 120.0  # a quick run older than this is measured again
POLL_S = 0.5  # while a timing runs, the page checks its tab and the Stop button this often


def _free_memory(device: str) -> int | None:
    """What the server can know of the memory free for a job on `device`, without torch.

    RAM: free now. A GPU: its total memory (host.facts()); what is free there is known only
    to torch, so the worker checks that again before it allocates (a refusal then comes back
    as the job's message)."""
    if not device.startswith("cuda"):
        return resources.cpu_memory_available()
    key = device if ":" in device else "cuda:0"
    return next(
        (d.total_memory for d in host.facts().devices if d.key == key and not d.simulated), None
    )


@st.cache_data(show_spinner=False, ttl=CALIBRATION_TTL_S, max_entries=64)
def calibration(workload: str, device: str, dtype: str, size: int) -> dict:
    """A quick measurement in a worker at `size` (or the largest quick size below it) to
    estimate the run; measured again after CALIBRATION_TTL_S, as the host's load changes.

    Skipped (not cached) while another timing holds the server's slot.
    """
    job = workloads.calibration_job(workload, device, dtype, size)
    point = run_now(
        "speed_point",
        (job, 3),
        memory.job_limits([job], 60.0),
        "speed",
        "the quick estimate",
        busy="another visitor's timing is running",
    )
    return asdict(point)


def _keep_comparison(state: dict, event) -> None:
    state["results"].append(event)


def _keep_sweep(state: dict, event) -> None:
    if isinstance(event, timing.Point):
        state["points"].append(asdict(event))
    else:
        state["skipped"].append(f"{event.job.describe()}: {event.reason}")


KEEPERS = {COMPARE_KEY: _keep_comparison, SWEEP_KEY: _keep_sweep}


def stop_running_job() -> None:
    """A rerun while a job streams (Stop, or any widget): end the job, keep what it sent."""
    running = st.session_state.pop(JOB_KEY, None)
    if not running:
        return
    followed, state = running["job"], st.session_state.get(running["state"])
    followed.end()
    if state is not None:
        for event in followed.unread():
            if not isinstance(event, timing.Progress):
                KEEPERS[running["state"]](state, event)


def run_in_worker(kind: str, args: tuple, limit_jobs: list, state_key: str, label: str) -> None:
    """Start a timing job in a worker, draw its progress, keep its results in session state.

    Waits up to QUEUE_S for another visitor's timing; raises Busy or JobFailed.
    """
    wait_box = st.empty()

    def waiting(running: int, ahead: int, _slots: int) -> None:
        wait_box.info(
            f"Waiting for another visitor's timing to finish ({running} running, {ahead} ahead "
            "of you); timings run one at a time so they do not slow each other down."
        )

    followed = Followed(
        start_in_line(kind, args, memory.job_limits(limit_jobs), "speed", QUEUE_S, waiting)
    )
    wait_box.empty()
    st.session_state[JOB_KEY] = {"job": followed, "state": state_key}
    keep = KEEPERS[state_key]
    state = st.session_state[state_key]
    bar = st.progress(0.0, text=label)
    shown = (0.0, label)
    try:
        for event in followed.events(POLL_S, tab_open):
            if event is None:
                # A Streamlit call on every poll, even without news: Streamlit stops a script
                # for a rerun (Stop, any widget) only inside one, and one call can be long.
                bar.progress(shown[0], text=shown[1])
            elif isinstance(event, timing.Progress):
                if event.done >= event.total:
                    shown = (1.0, f"{label}: done")
                else:
                    step = f"step {event.done + 1} of {event.total}, {event.label}"
                    shown = (event.done / event.total, f"{label}: {step}")
            else:
                keep(state, event)
        if not followed.job.finished:  # the tab closed: the job was ended
            return
    finally:
        followed.end()  # interrupted by a rerun, or failed: never leave it running
    st.session_state.pop(JOB_KEY, None)
    job = followed.job
    if error_kind(job) == "device_memory":
        raise JobFailed("The device ran out of memory; choose a smaller size.")
    if failure := followed.failure("the timing", plain=("size", "value")):
        raise JobFailed(failure)


def measurement_set(
    workload: str, dtype: str, calibration: timing.Point | None = None
) -> MeasurementSet:
    """This session's measurements of `workload` in `dtype` (section 1's and the sweep's), as
    the one set every ratio on the page is taken from."""
    swept = st.session_state.get(SWEEP_KEY)
    points = []
    if swept and swept["config"] == {"workload": workload, "dtype": dtype}:
        points = [timing.Point(**p) for p in swept["points"]]
    compared = st.session_state.get(COMPARE_KEY) or {}
    results = [
        c for c in compared.get("results", []) if (c.job.workload, c.job.dtype) == (workload, dtype)
    ]
    return MeasurementSet.build(points, results, compared.get("expected"), calibration)


def memory_problem(job: workloads.TimingJob) -> str | None:
    free = _free_memory(job.device)
    if free is None:  # not known here: the worker checks before it allocates
        return None
    try:
        memory.check_memory(job, free)
    except memory.SizeTooLarge as exc:
        return str(exc)
    return None


def new_run_state(total: int, **lists) -> dict:
    """Session-state record of a run: updated after every step, so a Stop keeps it."""
    return {"total": total, "done": False, "error": None, **lists}


def report_unfinished(state: dict, stopped_message: str) -> None:
    """An unfinished run either failed (say why) or was stopped by a rerun (say so)."""
    if state["error"]:
        st.error(message(state["error"]))
    elif state["error"] is None and not state["done"]:
        st.warning(stopped_message)
