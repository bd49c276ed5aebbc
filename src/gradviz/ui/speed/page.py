"""Speed page: CPU against GPU, the lesson's naive timing beside the correct one, a size sweep.

Thin: widgets in, gradviz.speed.timing does the work, results out. Its parts: `compare`
(section 1), `sweep` (section 2), `estimate` (section 3), `running` (the worker jobs). Every
ratio on the page (a GPU against this CPU, the crossovers) takes its CPU time from one set of
this session's measurements (gradviz.speed.measured): the same job gives the same figure in
every section, and a point the page flags as implausible is shown, marked, and in no ratio. Every
timing (the estimate, the comparison, each sweep step) runs in a worker process started for it
(gradviz.services.jobs), never in the server: its torch threads, tensors and memory are the
worker's, and one timing runs at a time server-wide. The page draws the worker's progress
events; results are kept in session state after every step, so pressing Stop (which makes
Streamlit rerun, interrupting the script at its next update, at most POLL_S away) keeps what
was measured, and the rerun asks the worker to end before its next call, killing it if a call
is still running workers.jobs.STOP_GRACE_S later (services.jobs.end). A closed tab ends its job
the same way (services.following).

The server never imports torch: what it knows of the GPU comes from host.facts() (asked of a
worker once), dtypes are names with their sizes in a table, and what a worker sends back is
plain data (gradviz.speed.timing's dataclasses of numbers and strings).
"""

from __future__ import annotations

import streamlit as st

from gradviz.services import host
from gradviz.services.jobs import JobFailed
from gradviz.speed import timing_reference, workloads
from gradviz.ui.speed import estimate
from gradviz.ui.speed.compare import comparison_section
from gradviz.ui.speed.running import measurement_set, stop_running_job
from gradviz.ui.speed.sweep import sweep_section
from gradviz.util import resources
from gradviz.util.mdtext import escape, message
from gradviz.util.reference import ReferenceFileError, load_reference

INTRO = """
A lesson times `result = result + tensor1 * tensor2` over `100x1000x1000` tensors, 1000 times,
with `time.time()` before and after, on the CPU and then on the GPU. On the GPU that measures
almost nothing of the work: CUDA calls return as soon as the kernel is **queued**, so the clock
stops while the GPU is still busy. It also counts making the random tensors, the copy to the
GPU and the one-off start-up of the first CUDA call. Below, the same code is timed both ways.
"""


def _gpu_name() -> str | None:
    """The first CUDA GPU's name, None without one (host.facts(): asked of a worker once)."""
    return host.facts().gpu_name


def reference_panel(gpu: str | None) -> timing_reference.Reference | None:
    """Say where GPU figures come from; return the reference file's data when it is used."""
    try:
        reference = load_reference(
            timing_reference.REFERENCE_PATH, timing_reference.REFERENCE_FORMAT
        )
    except ReferenceFileError as exc:
        st.error(
            f"The GPU reference file is not valid, so no GPU figures are shown: {exc}. "  # the operator's file
            f"Re-create it on a GPU machine with `{timing_reference.REFERENCE_COMMAND}`."
        )
        return None
    if gpu:
        st.success(f"GPU: **{escape(gpu)}**, timed live on this host.")
        return None
    if reference is None:
        st.info(
            "This host has no CUDA GPU, so only the CPU runs live. **No GPU reference has been "
            "recorded yet**: run `"
            f"{timing_reference.REFERENCE_COMMAND}` on a machine with an NVIDIA GPU; it writes "
            "`docs/gpu_speed_reference.json`, which this page then shows beside the live CPU. "
            "Until then, section 3 estimates a GPU's times from its maker's spec sheet."
        )
        return None
    st.info(
        f"This host has no CUDA GPU. GPU figures below come from a results file measured on "
        f"**{reference.device}** on {reference.date} (torch {reference.torch}, CUDA "
        f"{reference.cuda}) with `{reference.command}`; they are not live."
    )
    return reference


def page() -> None:
    st.title("CPU vs GPU speed")
    st.markdown(INTRO)
    stop_running_job()
    threads = resources.available_cpus()
    try:
        gpu = _gpu_name()
    except JobFailed as exc:  # asked again on the next rerun
        st.error(f"Could not ask a worker process which GPU this host has: {escape(exc)}")
        gpu = None
    st.caption(
        f"CPU threads: **{threads}** (`torch.set_num_threads({threads})` in the worker process "
        f"that times, all the CPUs this host gives us). GPU: **{gpu or 'none'}**. Timings run "
        "in a separate process, one at a time on this server."
    )
    reference = reference_panel(gpu)
    devices = ["cpu", "cuda"] if gpu else ["cpu"]
    cols = st.columns(2)
    with cols[0]:
        key = st.radio(
            "Workload",
            list(workloads.WORKLOADS),
            format_func=lambda k: workloads.WORKLOADS[k].title,
            key="speed_workload",
        )
    with cols[1]:
        dtype = st.selectbox(
            "dtype",
            list(workloads.DTYPES),
            format_func=lambda k: workloads.DTYPES[k].label,
            key="speed_dtype",
        )
        for device in devices:
            note = workloads.dtype_note(dtype, device)
            if note:
                st.caption(message(note))
    workload = workloads.WORKLOADS[key]
    cpu_job, calibration = comparison_section(workload, dtype, devices, reference)
    st.divider()
    sweep_section(workload, dtype, devices, reference, gpu)
    st.divider()
    basis = measurement_set(workload.key, dtype, calibration)
    estimate.section(workload, dtype, cpu_job, basis, reference, gpu)
