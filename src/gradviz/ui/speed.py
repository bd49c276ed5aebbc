"""Speed page: CPU against GPU, the lesson's naive timing beside the correct one, a size sweep.

Thin: widgets in, gradviz.speed (workloads, memory, timing) does the work, results out. Every timing (the estimate,
the comparison, each sweep step) runs in a worker process started for it (gradviz.services.jobs),
never in the server: its torch threads, tensors and memory are the worker's, and one
timing runs at a time server-wide. The page draws the worker's progress events; results
are kept in session state after every step, so pressing Stop (which makes Streamlit
rerun, interrupting the script at its next update, at most POLL_S away) keeps what was
measured, and the rerun asks the worker to end before its next call, killing it if a call is
still running workers.jobs.STOP_GRACE_S later (services.jobs.end). A closed tab ends its job
the same way.

The server never imports torch: what it knows of the GPU comes from host.facts() (asked of a
worker once), dtypes are names with their sizes in a table, and what a worker sends back is
plain data (gradviz.speed.timing's dataclasses of numbers and strings).
"""

from __future__ import annotations

from dataclasses import asdict

import streamlit as st

from gradviz.services import host
from gradviz.services.jobs import end, follow, run_now, start_in_line
from gradviz.speed import gpus, memory, timing, timing_reference, trust, workloads
from gradviz.ui import charts, speed_estimate
from gradviz.ui.common import show_unexpected, tab_open, table
from gradviz.util.format import fmt_seconds
from gradviz.util.mdtext import escape, message
from gradviz.util.reference import ReferenceFileError, load_reference
from gradviz.workers import resources
from gradviz.workers.jobs import JobFailed
from gradviz.workers.process import Busy

SWEEP_KEY = "speed_sweep"
COMPARE_KEY = "speed_compare"
JOB_KEY = "speed_job"  # the worker job of this session still running, if any
LONG_RUN_S = 60.0  # warn before a comparison estimated to take longer than this
QUEUE_S = 30.0  # how long a run waits for another visitor's timing to finish
CALIBRATION_TTL_S = 120.0  # a quick run older than this is measured again
SWEEP_RERUN_KEY = "speed_sweep_rerun_requested"
POLL_S = 0.5  # while a timing runs, the page checks its tab and the Stop button this often

INTRO = """
A lesson times `result = result + tensor1 * tensor2` over `100x1000x1000` tensors, 1000 times,
with `time.time()` before and after, on the CPU and then on the GPU. On the GPU that measures
almost nothing of the work: CUDA calls return as soon as the kernel is **queued**, so the clock
stops while the GPU is still busy. It also counts making the random tensors, the copy to the
GPU and the one-off start-up of the first CUDA call. Below, the same code is timed both ways.
"""

EXPLAIN = """
**Why the two figures differ**

- **Setup counted**: the lesson's clock includes `torch.randn` on the CPU and the copy to the
  device; the correct figure times only the loop.
- **First call**: the first call pays one-off costs (CUDA context, library loading, memory
  allocation); the correct timer runs a warm-up call first.
- **No synchronize**: on a GPU, the loop returns once its kernels are queued. The *pending*
  column is how long `torch.cuda.synchronize()` then still had to wait. The correct timer
  synchronizes before starting and before stopping the clock.
- **One sample**: a single run says nothing about noise; the correct figure is the median of
  several runs, with the interquartile range (IQR) as its spread.
"""


def _gpu_name() -> str | None:
    """The first CUDA GPU's name, None without one (host.facts(): asked of a worker once)."""
    return host.facts().gpu_name


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
def _calibration(workload: str, device: str, dtype: str, size: int) -> dict:
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


def _stop_running_job() -> None:
    """A rerun while a job streams (Stop, or any widget): end the job, keep what it sent."""
    running = st.session_state.pop(JOB_KEY, None)
    if not running:
        return
    job, state = running["job"], st.session_state.get(running["state"])
    end(job)
    if state is not None:
        for event in job.events[running["seen"] :]:
            if not isinstance(event, timing.Progress):
                KEEPERS[running["state"]](state, event)


def _run_in_worker(kind: str, args: tuple, limit_jobs: list, state_key: str, label: str) -> None:
    """Start a timing job in a worker, draw its progress, keep its results in session state.

    Waits up to QUEUE_S for another visitor's timing; raises Busy or JobFailed.
    """
    wait_box = st.empty()

    def waiting(running: int, ahead: int, _slots: int) -> None:
        wait_box.info(
            f"Waiting for another visitor's timing to finish ({running} running, {ahead} ahead "
            "of you); timings run one at a time so they do not slow each other down."
        )

    job = start_in_line(kind, args, memory.job_limits(limit_jobs), "speed", QUEUE_S, waiting)
    wait_box.empty()
    running = {"job": job, "seen": 0, "state": state_key}
    st.session_state[JOB_KEY] = running
    keep = KEEPERS[state_key]
    state = st.session_state[state_key]
    bar = st.progress(0.0, text=label)
    shown = (0.0, label)
    try:
        for new in follow(job, running["seen"], POLL_S, tab_open):
            for event in new:
                running["seen"] += 1
                if isinstance(event, timing.Progress):
                    if event.done >= event.total:
                        shown = (1.0, f"{label}: done")
                    else:
                        step = f"step {event.done + 1} of {event.total}, {event.label}"
                        shown = (event.done / event.total, f"{label}: {step}")
                else:
                    keep(state, event)
            # A Streamlit call on every poll, even without news: Streamlit stops a script for
            # a rerun (Stop, any widget) only inside one, and one timing call can be long.
            bar.progress(shown[0], text=shown[1])
        if not job.finished:  # the tab closed: follow() ended the job
            return
    finally:
        end(job)  # interrupted by a rerun, or failed: never leave it running
    st.session_state.pop(JOB_KEY, None)
    if job.status == "error" and job.error_type in ("SizeTooLarge", "ValueError"):
        raise JobFailed(job.message)
    if job.status == "error" and job.error_type == "OutOfMemoryError":
        raise JobFailed("The device ran out of memory; choose a smaller size.")
    if job.status != "done":
        raise JobFailed(job.describe_failure("the timing"))


def _reference_panel(gpu: str | None) -> timing_reference.Reference | None:
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


def _size_input(workload: workloads.Workload, key: str, default: int) -> int:
    return int(
        st.number_input(
            f"Size ({workload.size_label})",
            min_value=1,
            max_value=10**10,
            value=default,
            step=default,
            key=key,
        )
    )


def _use_lesson_size() -> None:
    st.session_state["speed_cmp_size_elementwise"] = workloads.LESSON_ELEMENTS
    st.session_state["speed_cmp_iters"] = workloads.LESSON_ITERATIONS


def _memory_problem(job: workloads.TimingJob) -> str | None:
    free = _free_memory(job.device)
    if free is None:  # not known here: the worker checks before it allocates
        return None
    try:
        memory.check_memory(job, free)
    except memory.SizeTooLarge as exc:
        return str(exc)
    return None


def _new_run_state(total: int, **lists) -> dict:
    """Session-state record of a run: updated after every step, so a Stop keeps it."""
    return {"total": total, "done": False, "error": None, **lists}


def _report_unfinished(state: dict, stopped_message: str) -> None:
    """An unfinished run either failed (say why) or was stopped by a rerun (say so)."""
    if state["error"]:
        st.error(message(state["error"]))
    elif state["error"] is None and not state["done"]:
        st.warning(stopped_message)


# ---------------------------------------------------------------------------------------------
# Naive vs correct
# ---------------------------------------------------------------------------------------------


def _comparison_section(
    workload: workloads.Workload,
    dtype: str,
    devices: list[str],
    reference: timing_reference.Reference | None,
) -> tuple[workloads.TimingJob, timing.Point | None]:
    """Section 1; returns its CPU job and the quick run on this CPU (None if it did not run)."""
    st.subheader("1. The lesson's timing, and the correct one")
    default = 1_000_000 if workload.key == "elementwise" else 1024
    cols = st.columns(3)
    with cols[0]:
        size = _size_input(workload, f"speed_cmp_size_{workload.key}", default)
    with cols[1]:
        iterations = (
            int(
                st.number_input(
                    "Iterations of the loop",
                    min_value=1,
                    max_value=workloads.LESSON_ITERATIONS,
                    value=10,
                    key="speed_cmp_iters",
                )
            )
            if workload.key == "elementwise"
            else 1
        )
    with cols[2]:
        repeats = int(st.slider("Timed repeats", 3, 15, 3, key="speed_cmp_repeats"))
    if workload.key == "elementwise":
        st.caption(
            f"The lesson used {workloads.LESSON_ELEMENTS:,} elements per tensor (100x1000x1000) and "
            f"{workloads.LESSON_ITERATIONS} iterations; it printed 178 s on its CPU. The defaults "
            "here are smaller so the page answers in seconds."
        )
        st.button("Use the lesson's full size", on_click=_use_lesson_size, key="speed_lesson_size")
    runs = [workloads.TimingJob(workload.key, size, d, dtype, iterations) for d in devices]
    problems = [p for p in (_memory_problem(j) for j in runs) if p]
    for problem in problems:
        st.warning(message(problem))
    cpu_job = runs[0]
    cal, expected, over = _estimate(workload, dtype, cpu_job, 1 + 1 + repeats)
    if over:
        problems.append(over)
    run_col, stop_col = st.columns([1, 1])
    run = run_col.button("Time it both ways", type="primary", disabled=bool(problems))
    stop_col.button("Stop", key="speed_cmp_stop", help="Stops the timing within a few seconds.")
    if run:
        st.session_state[COMPARE_KEY] = _new_run_state(
            total=len(runs), results=[], expected=expected
        )
        state = st.session_state[COMPARE_KEY]
        try:
            label = ", ".join(j.describe() for j in runs)
            _run_in_worker("speed_compare", (runs, repeats, 1), runs, COMPARE_KEY, label)
            state["done"] = True
        except (JobFailed, Busy) as exc:  # plain messages
            state["error"] = str(exc)
        except Exception as exc:
            state["error"] = ""  # reported here, once
            show_unexpected(exc, "timing the workload")
    _show_comparison(st.session_state.get(COMPARE_KEY), reference)
    return cpu_job, cal


def _estimate(
    workload: workloads.Workload, dtype: str, cpu_job: workloads.TimingJob, calls: int
) -> tuple[timing.Point | None, trust.EstimateRange | None, str | None]:
    """Show the estimate of a run on this CPU, as a range from a quick run; return the quick
    run, the range, and why the run may not start (its estimate, even at the low end, is
    over the limit one timing may run), if so."""
    try:
        cal = timing.Point(**_calibration(workload.key, "cpu", dtype, cpu_job.size))
        r = trust.estimate_range(cpu_job, cal)
    except (Busy, JobFailed) as exc:
        st.caption(f"No estimate now: {escape(exc)}.")
        return None, None, None
    except Exception as exc:  # an estimate is a nicety; never block the page on it
        st.caption(f"No estimate: {type(exc).__name__}: {escape(exc)}")
        return None, None, None
    basis = (
        "measured at this size"
        if r.extrapolated <= 1
        else f"scaled up {r.extrapolated:,.0f}x by the work, so it may be off several times"
    )
    st.caption(
        f"Estimated on this CPU: about {fmt_seconds(r.likely_s)} per call (likely between "
        f"{fmt_seconds(r.low_s)} and {fmt_seconds(r.high_s)}), {calls} calls (naive, warm-up, "
        f"{calls - 2} timed) ≈ {fmt_seconds(r.likely_s * calls)} in all, from a quick run of "
        f"{cal.job.describe()}, {basis}."
    )
    if r.noisy:
        st.warning(
            f"The quick run's repeats varied by {r.spread:.0%} of their median: this host is "
            "busy now, so timings taken now vary too; compare repeats, or run again later."
        )
    limit = memory.job_seconds()
    if r.low_s * calls > limit:
        over = (
            f"Even at the low end of the estimate this takes {fmt_seconds(r.low_s * calls)} on "
            f"this CPU, over the {fmt_seconds(limit)} one timing may run on this server, so "
            "*Time it both ways* is off. Choose a smaller size, fewer iterations or repeats."
        )
        st.warning(over)
        return cal, r, over
    if r.likely_s * calls > LONG_RUN_S:
        st.warning(
            f"This takes about {fmt_seconds(r.likely_s * calls)} on this CPU. It shows progress "
            f"and Stop ends it within a few seconds (each call about {fmt_seconds(r.likely_s)})."
        )
    if r.high_s * calls > limit:
        st.warning(
            f"That may be over the {fmt_seconds(limit)} one timing may run on this server; it "
            "would be stopped at the limit. Choose a smaller size or fewer repeats to be sure."
        )
    return cal, r, None


def _comparison_rows(comparisons, source: str) -> list[dict]:
    rows = []
    for c in comparisons:
        n, t = c.naive, c.timing
        rows.append(
            {
                "device": f"{c.job.device} ({source})",
                "job": c.job.describe() + f", {c.job.iterations} it.",
                "naive (lesson)": fmt_seconds(n.total_s),
                "of which setup": fmt_seconds(n.setup_s),
                "launch returned": fmt_seconds(n.launch_s),
                "pending at sync": fmt_seconds(n.pending_s),
                "correct median": fmt_seconds(t.median_s),
                "IQR": fmt_seconds(t.iqr_s),
                "repeats": t.repeats or "",
                "naive / correct": f"{n.total_s / t.median_s:.2f}x",
            }
        )
    return rows


def _flag_off_estimate(state: dict) -> None:
    """Flag a measured median whose repeats spread too much, and one on this CPU outside the
    estimate made before the run (the host's load changed between the two)."""
    expected = state.get("expected")
    for c in state["results"]:
        median = c.timing.median_s
        if spread := trust.spread_problem(median, c.timing.iqr_s):
            st.warning(
                f"{c.job.describe()}: {spread}. Press *Time it both ways* again, or raise the "
                "repeats, to see how much it moves."
            )
        if expected is None or c.job.device != "cpu":
            continue
        if expected.low_s <= median <= expected.high_s:
            continue
        st.warning(
            f"The CPU's measured median, {fmt_seconds(median)} per call, is outside the estimate "
            f"made just before it ({fmt_seconds(expected.low_s)} to "
            f"{fmt_seconds(expected.high_s)}; {median / expected.likely_s:,.2g}x its likely "
            "value): this host's load changed between the two, so neither is a steady figure."
        )


def _show_comparison(
    state: dict | None, reference: timing_reference.Reference | None = None
) -> None:
    rows = []
    if state:
        rows += _comparison_rows(state["results"], "live")
        _flag_off_estimate(state)
        _report_unfinished(
            state,
            f"Stopped: {len(state['results'])} of {state['total']} devices finished. "
            "Press *Time it both ways* to start again.",
        )
    if reference is not None and reference.comparisons:
        rows += _comparison_rows(reference.comparisons, f"reference: {reference.device}")
    if not rows:
        return
    table(rows)
    st.markdown(EXPLAIN)


# ---------------------------------------------------------------------------------------------
# Sweep
# ---------------------------------------------------------------------------------------------


def _sweep_section(
    workload: workloads.Workload,
    dtype: str,
    devices: list[str],
    reference: timing_reference.Reference | None,
    gpu: str | None,
) -> None:
    st.subheader("2. Size sweep: where does the GPU start to win?")
    options = list(workload.sweep_sizes)
    default = [
        s for s in options if workloads.TimingJob(workload.key, s).memory_needed() <= 64_000_000
    ]
    cols = st.columns([3, 1, 1])
    with cols[0]:
        sizes = st.multiselect(
            f"Sizes ({workload.size_label})",
            options,
            default=default,
            key=f"speed_sweep_sizes_{workload.key}",
        )
    with cols[1]:
        repeats = int(st.slider("Repeats", 3, 15, 3, key="speed_sweep_repeats"))
    with cols[2]:
        max_step_s = float(
            st.number_input("Max s per step", 1.0, 600.0, 20.0, key="speed_sweep_max_step")
        )
    its = workloads.SWEEP_ITERATIONS[workload.key]
    if workload.key == "elementwise":
        st.caption(f"Each call runs the lesson's loop with {its} iterations.")
    run_col, stop_col = st.columns([1, 1])
    run = run_col.button("Run sweep", type="primary", disabled=not sizes)
    run = bool(sizes) and (run or st.session_state.pop(SWEEP_RERUN_KEY, False))
    stop_col.button("Stop", key="speed_sweep_stop", help="Stops the sweep within a few seconds.")
    config = {"workload": workload.key, "dtype": dtype}
    if run:
        steps = workloads.sweep_jobs(workload.key, sizes, devices, dtype)
        st.session_state[SWEEP_KEY] = _new_run_state(
            total=len(steps), config=config, points=[], skipped=[]
        )
        state = st.session_state[SWEEP_KEY]
        # Sizes that do not fit are skipped by the sweep itself, so they set no memory cap.
        fits = [j for j in steps if _memory_problem(j) is None]
        try:
            args = (steps, repeats, 1, max_step_s)
            _run_in_worker("speed_sweep", args, fits, SWEEP_KEY, "Sweep")
            state["done"] = True
        except (JobFailed, Busy) as exc:
            state["error"] = str(exc)
        except Exception as exc:
            state["error"] = ""  # reported here, once
            show_unexpected(exc, "running the sweep")
    state = st.session_state.get(SWEEP_KEY)
    if state and state["config"] != config:
        state = None  # results of another workload/dtype: do not mix them in
    _show_sweep(workload, dtype, state, reference, gpu)


def _series_name(
    point: timing.Point, reference: timing_reference.Reference | None, live: bool, gpu: str | None
) -> str:
    if point.device == "cpu":
        return "CPU, this host (live)" if live else f"CPU of {reference.device} host (reference)"
    if live:
        return f"GPU {gpu} (live)"
    return f"GPU {reference.device} (reference, {reference.date[:10]})"


def _show_sweep(
    workload: workloads.Workload,
    dtype: str,
    state: dict | None,
    reference: timing_reference.Reference | None,
    gpu: str | None = None,
) -> None:
    live = [timing.Point(**p) for p in state["points"]] if state else []
    ref_points = []
    if reference is not None:
        ref_points = [
            p
            for p in reference.points
            if p.workload == workload.key
            and p.dtype == dtype
            and p.iterations == workloads.SWEEP_ITERATIONS[workload.key]
        ]
    if state:
        for reason in state["skipped"]:
            st.warning(f"Skipped {message(reason)}")
        _report_unfinished(
            state,
            f"Stopped after {len(state['points']) + len(state['skipped'])} of "
            f"{state['total']} steps; the chart shows what was measured.",
        )
    if not live and not ref_points:
        st.caption("Run a sweep to draw time against size.")
        return
    peak = gpus.for_device_name(gpu or (reference.device if reference else ""))
    rows = []
    for p, is_live in [(p, True) for p in live] + [(p, False) for p in ref_points]:
        frac = timing.fraction_of_peak(p, peak) if p.device.startswith("cuda") else None
        rows.append(
            {
                "series": _series_name(p, reference, is_live, gpu),
                "size": p.size,
                "shape": workload.describe_size(p.size),
                "median_ms": p.median_s * 1e3,
                "iqr_ms": p.iqr_s * 1e3,
                workload.metric: p.rate,
                "of peak": "" if frac is None else f"{frac:.0%}",
            }
        )
    _draw_charts(rows, workload, peak, dtype)
    _flag_untrusted(live, workload)
    # Crossover: this host's CPU against the GPU shown (live, or the reference's).
    cpu = [p for p in live if p.device == "cpu"]
    gpu = [p for p in live if p.device.startswith("cuda")] or [
        p for p in ref_points if p.device.startswith("cuda")
    ]
    if cpu and gpu:
        size = timing.crossover(cpu + gpu)
        common = {p.size for p in cpu} & {p.size for p in gpu}
        if not common:
            st.info("CPU and GPU were measured at no common size, so no crossover is given.")
        elif size is None:
            st.info("The GPU did not win at the largest size measured on both devices.")
        else:
            st.success(
                f"Crossover: the GPU is faster from size **{size:,}** "
                f"({workload.describe_size(size)}) upwards, among sizes measured on both."
            )
    if peak is None and gpu:
        st.caption("No peak figures are known for this GPU, so no fraction of peak is shown.")
    elif peak is not None:
        matmul_peak = timing.peak_rate(peak, "matmul", dtype)
        matmul_text = "unknown" if matmul_peak is None else f"{matmul_peak / 1000:,.0f} TFLOP/s"
        memory_text = "unknown" if peak.memory_gbps is None else f"{peak.memory_gbps:,.0f} GB/s"
        st.caption(
            f"Peak for {peak.label}: {memory_text} memory, {matmul_text} for {dtype} matmul "
            f"(dense, from [{peak.source_title}]({peak.source}), {peak.as_of}; docs/gpus.md). "
            "CPU peaks are not known to this page."
        )
    table(rows)


def _request_rerun() -> None:
    st.session_state[SWEEP_RERUN_KEY] = True


def _flag_untrusted(live: list[timing.Point], workload: workloads.Workload) -> None:
    """Warn about measured points whose spread or jump makes them untrustworthy; offer a re-run."""
    problems = trust.untrusted(live)
    if not problems:
        return
    lines = [
        f"- {device}, size {size:,} ({workload.describe_size(size)}): {why}."
        for (device, size), why in sorted(problems.items())
    ]
    st.warning(
        "These points look implausible, so the chart is not to be trusted there (a busy "
        "host, most often; timings on a shared host vary):\n" + "\n".join(lines)
    )
    st.button(
        "Re-run the sweep",
        key="speed_sweep_rerun",
        on_click=_request_rerun,
        help="Measure the sizes chosen above again; more repeats show a busy host as spread.",
    )


def _draw_charts(rows: list[dict], workload: workloads.Workload, peak, dtype: str) -> None:
    common = {
        "x": "size",
        "color": "series",
        "x_title": workload.size_label,
        "log_x": True,
        "log_y": True,
        "tooltip": ["series", "shape", "median_ms", "iqr_ms", workload.metric],
    }
    value = None if peak is None else timing.peak_rate(peak, workload.key, dtype)
    rules = [] if value is None else [charts.Rule(value, f"{peak.label} peak")]
    left, right = st.columns(2)
    left.vega_lite_chart(
        spec=charts.line_chart(
            rows,
            y="median_ms",
            y_title="median time per call (ms)",
            title="Time against size",
            **common,
        ),
        width="stretch",
    )
    right.vega_lite_chart(
        spec=charts.line_chart(
            rows,
            y=workload.metric,
            y_title=workload.metric,
            title=f"{workload.metric} against size",
            rules=rules,
            **common,
        ),
        width="stretch",
    )


# ---------------------------------------------------------------------------------------------


def page() -> None:
    st.title("CPU vs GPU speed")
    st.markdown(INTRO)
    _stop_running_job()
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
    reference = _reference_panel(gpu)
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
    cpu_job, calibration = _comparison_section(workload, dtype, devices, reference)
    st.divider()
    _sweep_section(workload, dtype, devices, reference, gpu)
    st.divider()
    compared = st.session_state.get(COMPARE_KEY) or {"results": []}
    swept = st.session_state.get(SWEEP_KEY)
    config = {"workload": workload.key, "dtype": dtype}
    sweep_cpu = [
        timing.Point(**p)
        for p in (swept["points"] if swept and swept["config"] == config else [])
        if p["device"] == "cpu"
    ]
    speed_estimate.section(
        workload, dtype, cpu_job, calibration, compared["results"], sweep_cpu, reference, gpu
    )
