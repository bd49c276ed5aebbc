"""The Speed page's section 2: a size sweep on each device, charted, with the crossover where
the GPU starts to win and points that look implausible flagged."""

from __future__ import annotations

import streamlit as st

from gradviz.services.jobs import JobFailed
from gradviz.speed import gpus, measured, timing, timing_reference, trust, workloads
from gradviz.ui import charts
from gradviz.ui.common import show_unexpected, table
from gradviz.ui.speed.running import (
    SWEEP_KEY,
    measurement_set,
    memory_problem,
    new_run_state,
    report_unfinished,
    run_in_worker,
)
from gradviz.util.busy import Busy
from gradviz.util.mdtext import message

SWEEP_RERUN_KEY = "speed_sweep_rerun_requested"


def sweep_section(
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
        st.session_state[SWEEP_KEY] = new_run_state(
            total=len(steps), config=config, points=[], skipped=[]
        )
        state = st.session_state[SWEEP_KEY]
        # Sizes that do not fit are skipped by the sweep itself, so they set no memory cap.
        fits = [j for j in steps if memory_problem(j) is None]
        try:
            args = (steps, repeats, 1, max_step_s)
            run_in_worker("speed_sweep", args, fits, SWEEP_KEY, "Sweep")
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
        report_unfinished(
            state,
            f"Stopped after {len(state['points']) + len(state['skipped'])} of "
            f"{state['total']} steps; the chart shows what was measured.",
        )
    if not live and not ref_points:
        st.caption("Run a sweep to draw time against size.")
        return
    peak = gpus.for_device_name(gpu or (reference.device if reference else ""))
    basis = measurement_set(workload.key, dtype)
    flags = {
        (f.point.device, f.point.size): f.flag
        for f in basis.flagged()
        if f.source == measured.SWEEP
    }
    rows = []
    for p, is_live in [(p, True) for p in live] + [(p, False) for p in ref_points]:
        flag = flags.get((p.device, p.size)) if is_live else None
        frac = timing.fraction_of_peak(p, peak) if p.device.startswith("cuda") else None
        rows.append(
            {
                "series": _series_name(p, reference, is_live, gpu),
                "size": p.size,
                "shape": workload.describe_size(p.size),
                "median_ms": p.median_s * 1e3,
                "iqr_ms": p.iqr_s * 1e3,
                workload.metric: p.rate,
                "of peak": "" if frac is None or flag else f"{frac:.0%}",
                "flag": "implausible: in no ratio" if flag else "",
            }
        )
    _draw_charts(rows, workload, peak, dtype)
    _say_devices(rows, reference, gpu, workload, dtype)
    _flag_untrusted(live, workload)
    _crossover(basis, workload, dtype, ref_points)
    gpu = [p for p in live + ref_points if p.device.startswith("cuda")]
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


def _crossover(basis, workload, dtype, ref_points) -> None:
    """This host's CPU against the GPU shown (live, or the reference's), from the page's one
    set of measurements: a flagged point is in no crossover."""
    its = workloads.SWEEP_ITERATIONS[workload.key]
    cpu_all = basis.series(workload.key, "cpu", dtype, its, trusted_only=False)
    cpu = [f for f in cpu_all if f.trusted]
    live_gpu = basis.series(workload.key, "cuda", dtype, its, trusted_only=False)
    gpu_side = live_gpu or [p for p in ref_points if p.device.startswith("cuda")]
    if not cpu_all or not gpu_side:
        return
    size, common = measured.crossover_of(cpu, gpu_side)
    left_out = len(cpu_all) - len(cpu) + sum(1 for f in live_gpu if not f.trusted)
    note = f" {left_out} flagged point{'s' if left_out != 1 else ''} left out." if left_out else ""
    if not common:
        st.info(
            "CPU and GPU have no common size among the points not flagged, so no crossover "
            f"is given.{note}"
        )
    elif size is None:
        st.info(f"The GPU did not win at the largest size measured on both devices.{note}")
    else:
        st.success(
            f"Crossover: the GPU is faster from size **{size:,}** "
            f"({workload.describe_size(size)}) upwards, among sizes measured on both.{note}"
        )


def _say_devices(rows, reference, gpu: str | None, workload, dtype: str) -> None:
    """Name the lines drawn; on a host without a GPU line, say what it would be and why not."""
    series = sorted({r["series"] for r in rows})
    st.caption("Lines drawn: " + "; ".join(series) + ".")
    if any(r["series"].startswith("GPU") for r in rows):
        return
    if gpu:
        why = "the sweep ran on the CPU only"
    elif reference is None:
        why = (
            "this host has no CUDA GPU, and no GPU reference file has been recorded "
            f"(`{timing_reference.REFERENCE_COMMAND}` on a GPU machine writes one)"
        )
    else:
        why = (
            f"this host has no CUDA GPU, and the reference file ({reference.device}) has no "
            f"GPU points for {workload.title.lower()} in {dtype} with "
            f"{workloads.SWEEP_ITERATIONS[workload.key]} iteration(s) per call"
        )
    st.info(
        f"No GPU line: {why}. A GPU line would be the same sizes timed on a CUDA GPU: nearly "
        "flat at small sizes, where each call costs about one kernel launch, then rising with "
        "the size, below the CPU's line from the crossover on. Section 3 estimates a GPU's "
        "times from its spec sheet."
    )


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
        "tooltip": ["series", "shape", "median_ms", "iqr_ms", workload.metric, "flag"],
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
