"""The Speed page's section 1: the lesson's timing beside the correct one, with an estimate
of the run on this CPU before it starts."""

from __future__ import annotations

import streamlit as st

from gradviz.services.jobs import JobFailed
from gradviz.speed import measured, memory, timing, timing_reference, trust, workloads
from gradviz.ui.common import show_unexpected, table
from gradviz.ui.speed import running
from gradviz.ui.speed.running import (
    COMPARE_KEY,
    memory_problem,
    new_run_state,
    report_unfinished,
    run_in_worker,
)
from gradviz.util.busy import Busy
from gradviz.util.format import fmt_seconds
from gradviz.util.mdtext import escape, message

LONG_RUN_S = 60.0  # warn before a comparison estimated to take longer than this
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
EXPLAIN_CPU = EXPLAIN.replace(
    """- **No synchronize**: on a GPU, the loop returns once its kernels are queued. The *pending*
  column is how long `torch.cuda.synchronize()` then still had to wait. The correct timer
  synchronizes before starting and before stopping the clock.
""",
    """- **No synchronize**: on a GPU, the loop returns once its kernels are queued, so the lesson's
  clock stops early. On a CPU the work is done when the call returns, so this table has no
  *launch returned* / *pending at sync* columns: they mean something only on a GPU.
""",
)
assert EXPLAIN_CPU != EXPLAIN


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


def comparison_section(
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
    problems = [p for p in (memory_problem(j) for j in runs) if p]
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
        st.session_state[COMPARE_KEY] = new_run_state(
            total=len(runs), results=[], expected=expected
        )
        state = st.session_state[COMPARE_KEY]
        try:
            label = ", ".join(j.describe() for j in runs)
            run_in_worker("speed_compare", (runs, repeats, 1), runs, COMPARE_KEY, label)
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
        cal = timing.Point(**running.calibration(workload.key, "cpu", dtype, cpu_job.size))
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


NOT_ON_CPU = "n/a on a CPU"


def _comparison_rows(comparisons, source: str, flags: dict, gpu_columns: bool) -> list[dict]:
    """One row per comparison. The launch / pending columns mean something only on a GPU:
    left out when no row is a GPU's, "n/a on a CPU" in a CPU's row otherwise. A flagged
    measurement gives no ratio."""
    rows = []
    for c in comparisons:
        n, t = c.naive, c.timing
        on_gpu = c.job.device.startswith("cuda")
        row = {
            "device": f"{c.job.device} ({source})",
            "job": c.job.describe() + f", {c.job.iterations} it.",
            "naive (lesson)": fmt_seconds(n.total_s),
            "of which setup": fmt_seconds(n.setup_s),
        }
        if gpu_columns:
            row["launch returned"] = fmt_seconds(n.launch_s) if on_gpu else NOT_ON_CPU
            row["pending at sync"] = fmt_seconds(n.pending_s) if on_gpu else NOT_ON_CPU
        flag = flags.get(c.job)
        row |= {
            "correct median": fmt_seconds(t.median_s),
            "IQR": fmt_seconds(t.iqr_s),
            "repeats": t.repeats or "",
            "naive / correct": "flagged, no ratio" if flag else f"{n.total_s / t.median_s:.2f}x",
        }
        rows.append(row)
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
    live = state["results"] if state else []
    theirs = list(reference.comparisons) if reference is not None else []
    gpu_columns = any(c.job.device.startswith("cuda") for c in live + theirs)
    rows = []
    if state:
        flags = measured.comparison_flags(live, state.get("expected"))
        rows += _comparison_rows(live, "live", flags, gpu_columns)
        _flag_off_estimate(state)
        if flags:
            st.caption(
                "A flagged measurement is shown, marked, but is left out of every ratio on "
                "this page (section 3 uses the sweep's figure, or the quick run scaled, instead)."
            )
        report_unfinished(
            state,
            f"Stopped: {len(state['results'])} of {state['total']} devices finished. "
            "Press *Time it both ways* to start again.",
        )
    if theirs:
        rows += _comparison_rows(theirs, f"reference: {reference.device}", {}, gpu_columns)
    if not rows:
        return
    table(rows)
    st.markdown(EXPLAIN if gpu_columns else EXPLAIN_CPU)
