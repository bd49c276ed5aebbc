"""The Speed page's GPU estimate: how fast a chosen GPU would be, from its maker's spec sheet,
beside this host's CPU as measured (gradviz.ui.speed draws the rest of the page).

Thin: gradviz.speed.estimate computes, gradviz.speed.gpus holds the figures and their
sources; this module picks, labels and draws. Every GPU figure here is labelled "estimate from
spec sheet", every CPU figure "measured" (or "scaled from the quick run", a measured point
scaled by the workload's cost), and a measured GPU reference, where there is one, stands beside
the estimate with their ratio. No torch.
"""

from __future__ import annotations

import streamlit as st

from gradviz.devices.info import DTYPE_BYTES
from gradviz.speed import estimate, gpus, measured, timing, timing_reference, workloads
from gradviz.ui.common import table
from gradviz.util.format import fmt_seconds
from gradviz.util.mdtext import escape, message

PICK_KEY = "speed_est_gpu"
DEFAULT_GPU = "T4"  # the GPU of free notebook tiers: what most learners could try next
LABEL = estimate.LABEL
MEASURED = "measured on this host"  # a flagged point is shown but in no ratio
SCALED = measured.SCALED

INTRO = f"""
Most hosts of this page have no GPU. Makers publish how fast their GPUs move memory and do
arithmetic. From those
figures, and what each workload reads, writes and computes, the page estimates a GPU's time
per call and puts it beside this host's CPU. Every GPU time in this section is an
**{LABEL}**, not a measurement: real kernels reach less than the peak, so read it as the
fastest the spec sheet allows. The assumptions and sources are one click away, below.
"""


def default_gpu(live_gpu: str | None, reference: timing_reference.Reference | None) -> str:
    """The GPU to show first: this host's, else the reference file's, else DEFAULT_GPU."""
    for name in (live_gpu, reference.device if reference else None):
        found = gpus.for_device_name(name) if name else None
        if found is not None:
            return found.key
    return DEFAULT_GPU


def _figures_line(gpu: gpus.GPU, dtype: str) -> str:
    def show(value, unit):
        return "not published" if value is None else f"{value:,g} {unit}"

    matmul = gpus.matmul_tflops(gpu, dtype)
    return (
        f"**{gpu.label}**: memory {show(gpu.memory_gbps, 'GB/s')}, {dtype} matmul "
        f"{show(matmul, 'TFLOP/s')} (dense), {show(gpu.memory_gb, 'GB')}, "
        f"{gpu.link.describe()}. Source: [{gpu.source_title}]({gpu.source}), {gpu.as_of}."
    )


def _source_text(figure: measured.Figure) -> str:
    return SCALED if figure.source == measured.SCALED else f"measured in {figure.source}"


def _headline(gpu: gpus.GPU, job: workloads.TimingJob, basis: measured.MeasurementSet) -> None:
    e = estimate.estimate(gpu, job)
    cpu = basis.time_for(job)
    cpu_s = None if cpu is None else cpu.seconds
    rows = [
        {
            "what": "CPU, this host",
            "time per call": "" if cpu_s is None else fmt_seconds(cpu_s),
            "how it is known": "not measured yet" if cpu is None else _source_text(cpu),
            "against the CPU": "",
            "bound by": "",
        }
    ]
    copy_bound = "the copy" if e.copy_s > e.run_s else e.bound
    for name, seconds, bound in (
        ("data already on the GPU", e.run_s, e.bound),
        ("copy from the CPU first", e.total_s, copy_bound),
    ):
        rows.append(
            {
                "what": f"{gpu.label}, {name}",
                "time per call": fmt_seconds(seconds),
                "how it is known": LABEL,
                "against the CPU": "" if cpu_s is None else estimate.speedup(cpu_s, seconds),
                "bound by": bound,
            }
        )
    st.markdown(
        f"**The job of section 1**: {escape(job.spec.describe_size(job.size))} {job.dtype}, "
        f"{job.iterations} iteration(s)."
    )
    table(rows)
    _say_basis(job, basis, cpu)


def _say_basis(job, basis: measured.MeasurementSet, used: measured.Figure | None) -> None:
    """Where the CPU figure comes from when this job was measured more than once, or its
    measurement is flagged."""
    figure = basis.figure(job)
    mentioned = ([figure] if figure is not None else []) + list(basis.others.get(job, ()))
    notes = []
    for f in mentioned:
        if f is used:
            continue
        text = f"{_source_text(f)}: {fmt_seconds(f.seconds)}"
        if not f.trusted:
            text += f", {measured.LEFT_OUT} ({f.flag})"
        else:
            text += " (not used: one figure per job on this page)"
        notes.append(text)
    if notes and used is not None:
        st.caption(
            f"Every ratio on this page uses the CPU figure {_source_text(used)} "
            f"({fmt_seconds(used.seconds)}) for this job. Also for this job: "
            + "; ".join(notes)
            + "."
        )
    elif notes:
        st.caption("For this job: " + "; ".join(notes) + ".")


def _cpu_curve(
    workload: workloads.Workload, dtype: str, basis: measured.MeasurementSet
) -> tuple[list[measured.Figure], str]:
    """CPU figures to compare against: the page's measured set (flagged ones too, to be
    shown as such), else the quick run scaled."""
    its = workloads.SWEEP_ITERATIONS[workload.key]
    figures = basis.series(workload.key, "cpu", dtype, its, trusted_only=False)
    if len({f.point.size for f in figures if f.trusted}) >= 2:
        return figures, MEASURED
    if basis.calibration is None:
        return [], ""
    # The quick run scaled, except where the set has a trusted measurement of that job: the
    # same job shows the same figure here as in the headline above.
    jobs = [workloads.TimingJob(workload.key, n, "cpu", dtype, its) for n in workload.sweep_sizes]
    return [basis.time_for(job) for job in jobs], SCALED


def _crossover(gpu: gpus.GPU, workload: workloads.Workload, dtype, basis) -> None:
    cpu, how = _cpu_curve(workload, dtype, basis)
    if not cpu:
        st.caption(
            "The crossover needs this CPU's time: run the sweep above, or wait for the quick run."
        )
        return
    rows = []
    for f in cpu:
        p = f.point
        e = estimate.estimate(gpu, p.job)
        rows.append(
            {
                "size": p.size,
                "shape": workload.describe_size(p.size),
                "CPU, this host": fmt_seconds(p.median_s),
                "how it is known": _source_text(f),
                f"GPU, data on it ({LABEL})": fmt_seconds(e.run_s),
                f"GPU with the copy ({LABEL})": fmt_seconds(e.total_s),
                "GPU with the copy against the CPU": (
                    estimate.speedup(p.median_s, e.total_s) if f.trusted else "flagged, no ratio"
                ),
            }
        )
    trusted = [f.point for f in cpu if f.trusted]
    if how == SCALED:  # a line, not points: look for the crossover on a finer grid of sizes
        its = workloads.SWEEP_ITERATIONS[workload.key]
        trusted = estimate.scaled_cpu_points(basis.calibration, estimate.grid(workload.key), its)
    found = [estimate.crossover_with(gpu, trusted, with_copy) for with_copy in (False, True)]
    st.markdown(
        f"**Where the {escape(gpu.label)} would start to win** ({LABEL}, against this CPU, {how}):"
    )
    table(rows)
    if left_out := len(cpu) - sum(1 for f in cpu if f.trusted):
        st.caption(
            f"{left_out} CPU point{'s are' if left_out != 1 else ' is'} flagged as implausible "
            "(section 2 says why): shown, but left out of the ratios and the crossover."
        )
    _say_crossover(gpu, workload, found, how)


def _say_crossover(gpu, workload, found: list, how: str) -> None:
    def size_text(size):
        if size is None:
            return "at no size compared"
        shape = workload.describe_size(size)
        return f"**{size:,}**" + ("" if shape == str(size) else f" ({shape})")

    without, with_copy = found
    text = (
        f"Estimated crossover for the {gpu.label} ({LABEL}): faster than this CPU from "
        f"{size_text(without)} upwards with the data already on the GPU, and from "
        f"{size_text(with_copy)} upwards counting the copy from the CPU."
    )
    (st.success if without is not None else st.info)(text)
    if how == SCALED:
        st.caption(
            "The CPU side is one measured point scaled by the workload's cost, a straight line. "
            "A real CPU is not: small tensors fit in its caches (faster than the line) and every "
            "op has a fixed cost (slower). Run the sweep above and the crossover is worked out "
            "from the CPU measured at each size."
        )


def _against_reference(gpu: gpus.GPU, workload, dtype, reference) -> None:
    """Measured GPU times from the reference file beside this GPU's estimate, and the ratio."""
    if reference is None:
        return
    found = [p for p in reference.points if p.workload == workload.key and p.dtype == dtype]
    found += [
        timing.Point(
            c.job.workload,
            c.job.device,
            c.job.dtype,
            c.job.size,
            c.job.iterations,
            c.timing.median_s,
            c.timing.iqr_s,
            c.timing.repeats,
        )
        for c in reference.comparisons
        if c.job.workload == workload.key and c.job.dtype == dtype
    ]
    found = [p for p in found if p.device.startswith("cuda")]
    if not found:
        return
    rows = []
    for p in sorted(found, key=lambda p: (p.iterations, p.size)):
        e = estimate.estimate(
            gpu, workloads.TimingJob(p.workload, p.size, "cpu", p.dtype, p.iterations)
        )
        rows.append(
            {
                "job": f"{workload.describe_size(p.size)}, {p.iterations} it.",
                f"measured on {reference.device}": fmt_seconds(p.median_s),
                f"{gpu.label} ({LABEL})": fmt_seconds(e.run_s),
                "measured / estimate": f"{p.median_s / e.run_s:.2f}x",
            }
        )
    st.markdown(
        f"**Estimate against measurement** (the reference file, {escape(reference.date[:10])}):"
    )
    table(rows)
    same = gpus.for_device_name(reference.device)
    if same is not None and same.key == gpu.key:
        st.caption(
            "Same GPU model: a ratio above 1 is how far the real kernels fell short of the spec "
            "sheet (launches, caches, kernel efficiency)."
        )
    else:
        st.warning(
            f"The reference was measured on {escape(reference.device)}, the estimate is for the "
            f"{escape(gpu.label)}: the ratio compares two different GPUs as well as the model."
        )


def _cifar_step(gpu: gpus.GPU) -> None:
    """The CIFAR-10 tutorial network's training step: the Training page's other workload."""
    st.markdown(f"**The CIFAR-10 tutorial network, one training step** ({LABEL}):")
    try:
        steps = [estimate.estimate_step(gpu, batch) for batch in estimate.CIFAR_BATCHES]
    except estimate.NoEstimate as exc:
        st.caption(message(exc))
        return
    rows = []
    for batch, e in zip(estimate.CIFAR_BATCHES, steps, strict=True):
        rows.append(
            {
                "batch": batch,
                "step, data on the GPU": fmt_seconds(e.run_s),
                "step with the batch's copy": fmt_seconds(e.total_s),
                "images/s with the copy": f"{batch / e.total_s:,.0f}",
                "bound by": e.bound,
            }
        )
    table(rows)
    st.caption(
        f"TutorialNet with cross-entropy and SGD with momentum in float32, as the Training "
        f"page's tutorial preset (batch 4; 512 is the fast preset's batch, on this network). "
        f"A step runs {estimate.CIFAR_STEP.kernels} kernels, so at batch 4 every GPU waits on "
        "launches: the GPU's speed hardly matters until the batch grows. Left out: the "
        "tutorial's loss.item() each step (a wait for the GPU) and its per-image preparation "
        "on the CPU. The Training page measures this host's CPU."
    )


def _assumptions(gpu: gpus.GPU) -> None:
    with st.expander("Assumptions behind the estimate, and where each figure comes from"):
        st.markdown(
            "```\nrun   = max(FLOPs / peak, bytes moved / memory bandwidth, eager ops x launch)\n"
            "copy  = input bytes / host link + one launch per input\ntotal = run + copy\n```"
        )
        rows = [{"figure": name, "value": _figure_text(gpu, name)} for name in gpus.FIGURES]
        rows.append({"figure": "host link", "value": gpu.link.describe()})
        table(rows)
        st.markdown(
            f"From [{gpu.source_title}]({gpu.source}) ({gpu.as_of}), checked against "
            f"{escape(gpu.checked)}. {message(gpu.note)}"
        )
        lines = []
        for a in estimate.ASSUMPTIONS:
            where = f" ([source]({a.source}))" if a.source else ""
            lines.append(f"- **{a.name}**: {escape(a.value)}. {escape(a.why)}{where}")
        sizes = ", ".join(f"{k} {DTYPE_BYTES[k]}" for k in ("float32", "bfloat16", "float16"))
        lines.append(f"- **Bytes per element**: {sizes} (TF32 is float32 in memory).")
        st.markdown("\n".join(lines))
        st.caption("The whole table, with every source: docs/gpus.md.")


def _figure_text(gpu: gpus.GPU, name: str) -> str:
    value = getattr(gpu, name)
    if value is None:
        return (
            "no TF32: the FP32 rate" if name == "tf32_tflops" and gpu.no_tf32 else "not published"
        )
    mark = " (given with sparsity only, halved)" if name in gpu.halved else ""
    mark = " (derived, see the note)" if name in gpu.derived else mark
    return f"{value:,g}{mark}"


def section(
    workload: workloads.Workload,
    dtype: str,
    job: workloads.TimingJob,
    basis: measured.MeasurementSet,
    reference: timing_reference.Reference | None,
    live_gpu: str | None,
) -> None:
    """Section 3: pick a GPU; its estimate beside this CPU, the crossover, the reference."""
    st.subheader("3. How fast on a GPU? An estimate from spec sheets")
    st.markdown(INTRO)
    keys = [g.key for g in gpus.GPUS]
    if st.session_state.get(PICK_KEY) not in gpus.BY_KEY:  # first run, or a stale name
        st.session_state[PICK_KEY] = default_gpu(live_gpu, reference)
    key = st.selectbox(
        "GPU model (figures from its maker's spec sheet)",
        keys,
        format_func=lambda k: gpus.BY_KEY[k].label,
        key=PICK_KEY,
    )
    gpu = gpus.BY_KEY[key]
    st.caption(_figures_line(gpu, dtype))
    try:
        _headline(gpu, job, basis)
        _crossover(gpu, workload, dtype, basis)
        _against_reference(gpu, workload, dtype, reference)
    except estimate.NoEstimate as exc:
        st.info(message(exc))
    _cifar_step(gpu)
    _assumptions(gpu)
