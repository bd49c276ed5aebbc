"""Devices page: what this host has, every way of mixing devices, model placement, memory,
and what moving data costs."""

from __future__ import annotations

import math

import streamlit as st

from gradviz.devices import info as device_info
from gradviz.devices import lessons as device_lessons
from gradviz.devices import transfer_reference
from gradviz.devices.lessons import LESSONS, LESSONS_BY_KEY
from gradviz.program.results.reports import kind_title
from gradviz.program.results.trace import RunOptions, Trace
from gradviz.services import host
from gradviz.services.jobs import JobFailed
from gradviz.services.programs import run_isolated
from gradviz.ui import device_panel, training_ddp
from gradviz.ui.common import table
from gradviz.util.format import fmt_bytes, fmt_in
from gradviz.util.mdtext import escape, message
from gradviz.util.reference import ReferenceFileError, load_reference


@st.cache_data(max_entries=64, show_spinner=False)
def lesson_trace(source: str) -> Trace:
    """A lesson runs in a warm worker like any program (gradviz.services.programs): the
    simulated-CUDA machinery (FakeTensorMode, which imports much of torch's compiler) stays
    out of the server."""
    return run_isolated(source, RunOptions(classic=False))


@st.cache_data(max_entries=8, show_spinner=False)
def _placement_of(device: str) -> dict:
    """Lesson 003's `next(model.parameters()).device`, asked of PyTorch in a worker (on simulated
    CUDA the model is built under FakeTensorMode, which stays out of the server)."""
    return host.ask("placement", (device,))


@st.cache_data(ttl=5, show_spinner=False)
def _cuda_memory() -> list[device_info.CudaMemory]:
    """The CUDA allocator and driver figures, as a fresh worker sees them (a few seconds old
    at most)."""
    return host.ask("cuda_memory")


def page() -> None:
    st.title("Devices")
    try:
        facts = host.facts()
    except JobFailed as exc:
        st.error(
            f"Could not ask a worker process what this host has: {escape(exc)} Reload the page to "
            "try again.",
            icon=":material/error:",
        )
        return
    simulated = facts.simulated
    st.caption("Where every tensor lives, what mixing devices breaks, and what moving data costs.")
    if simulated:
        st.warning(
            "This host has no CUDA GPU, so CUDA is **simulated**: values are computed on the "
            "CPU while PyTorch itself, on simulated CUDA, decides which device each result lives on "
            "and raises PyTorch's own device errors. Every message below is marked *simulated* "
            "or *captured on a real GPU*.",
            icon=":material/memory:",
        )
    _host(facts)
    _lessons(simulated)
    _placement()
    training_ddp.placement_section(facts)
    _memory()
    _costs(simulated)


def _host(facts: device_info.HostFacts) -> None:
    st.header("This host", divider="gray")
    table(
        [
            {
                "device": d.label,
                "kind": d.kind,
                "name": d.name,
                "memory": fmt_bytes(d.total_memory) if d.total_memory else "",
            }
            for d in facts.devices
        ]
    )


def _lessons(simulated: bool) -> None:
    st.header("Mixing devices", divider="gray")
    st.markdown(
        "Operands of one operation must share a device; PyTorch never copies between devices "
        "behind your back. The exception: a 0-dim CPU tensor (one number) joins any device. "
        "Each case below is run now, here."
    )
    rows = []
    for lesson in LESSONS:
        trace = lesson_trace(lesson.source)
        err = trace.error
        device = err.details.device if err else None
        rows.append(
            {
                "case": lesson.title,
                "PyTorch": (err.message if err else "runs")[:110],
                "line": err.line if err else None,
                "fix": device.fix_code if device else "",
                "message source": (device.source if device else "")
                or ("simulated devices" if trace.simulated else "this machine"),
            }
        )
    table(rows)
    _checked_on_gpu()
    key = st.selectbox(
        "Look at one case",
        [x.key for x in LESSONS],
        format_func=lambda k: LESSONS_BY_KEY[k].title,
        key="device_lesson",
    )
    lesson = LESSONS_BY_KEY[key]
    trace = lesson_trace(lesson.source)
    st.code(lesson.source, language="python", line_numbers=True)
    if trace.error:
        err = trace.error
        title = err.details.title if err.details.title is not None else kind_title(err.kind)
        st.error(
            f"**{escape(title)}.** Line {err.line}: {message(err.message)}",
            icon=":material/error:",
        )
        device_panel.error_details(err.details.device)
    else:
        st.success(
            "PyTorch allows this. Where each tensor lives: "
            + ", ".join(
                message(f"`{t.label}` {device_info.device_label(t.device, trace.simulated)}")
                for t in trace.tensors
            ),
            icon=":material/check:",
        )


def _said(side: dict | None) -> str:
    if side is None:
        return "—"
    if not side.get("error"):
        return "runs"
    return f"line {side.get('line')}: {side.get('message', '')}"


def _checked_on_gpu() -> None:
    """What a real GPU said to the same cases (docs/gpu/simulated_vs_real.json)."""
    try:
        found = load_reference(device_lessons.GPU_CHECK_PATH, device_lessons.GPU_CHECK_FORMAT)
    except ReferenceFileError as exc:
        st.warning(f"The real GPU's answers could not be read: {escape(exc)}")
        return
    if found is None:
        st.caption(
            "No real GPU has checked these cases yet: `make gpu-check` runs each one on "
            "simulated CUDA and on a real GPU and compares them."
        )
        return
    machine, rows = found["machine"], found["rows"]
    compared = [r for r in rows if "real" in r]
    same = [r for r in compared if r["verdict"] in device_lessons.VERDICTS_SAME]
    worded = [r for r in compared if r["verdict"] == "message differs"]
    st.caption(
        f"Checked on a real GPU ({machine['gpu']}, torch {machine['torch']}, "
        f"{machine['date']}) with `make gpu-check`: {len(same)} of {len(compared)} cases fail "
        f"or run the same way, on the same line, with the same explanation and fix; in "
        f"{len(worded)} of them the GPU's kernels word PyTorch's message differently (for a "
        "matrix product: 'got mat2 is on cpu, different from other tensors on cuda:0'). "
        f"{len(rows) - len(compared)} need more GPUs than it had."
    )
    with st.expander("Simulated CUDA against the real GPU, case by case"):
        table(
            [
                {
                    "case": r["title"],
                    "simulated": _said(r["simulated"])[:110],
                    "real GPU": _said(r.get("real"))[:110],
                    "verdict": r["verdict"],
                }
                for r in rows
            ]
        )


def _placement() -> None:
    st.header("Model placement", divider="gray")
    st.markdown(
        "A model's parameters live on one device; `next(model.parameters()).device` says which. "
        "Inputs must be moved to the same device before the forward pass."
    )
    facts = host.facts()
    choices = facts.device_choices()
    simulated = facts.simulated
    dev = st.selectbox(
        "Build torch.nn.Linear(4, 2) on",
        choices,
        format_func=lambda d: device_info.device_label(d, simulated),
        key="placement_device",
    )
    try:
        result = _placement_of(dev)
    except JobFailed as exc:
        st.error(f"Could not build the model now: {escape(exc)}")
        return
    st.code(result["code"], language="python")
    label = device_info.device_label(result["device"], result["simulated"])
    st.markdown(f"PyTorch answers: **{label}** (weight and bias: {escape(result['parameters'])})")


def _memory() -> None:
    st.header("Memory", divider="gray")
    rows = []
    if host.facts().cuda_available:
        try:
            rows = _cuda_memory()
        except JobFailed as exc:
            st.error(f"Could not ask the CUDA allocator now: {escape(exc)}")
            return
    if not rows:
        st.info(
            "No CUDA GPU here, so there is no CUDA allocator to ask. On a GPU this shows, per "
            "device, torch.cuda.memory_allocated (tensors alive), memory_reserved (held by "
            "PyTorch's caching allocator) and the memory all processes use (what nvidia-smi "
            "shows). The autograd page's Tensors tab shows the bytes of a program's tensors "
            "per device, simulated or real."
        )
        return
    device_panel.allocator_table(rows)
    st.caption(
        "Asked of a fresh worker process: programs run in workers, so allocated and reserved "
        "are that worker's own (zero until it makes tensors); the memory all processes use is "
        "the driver's view of the whole GPU."
    )


def _rows(measurements) -> list[dict]:
    out = []
    for m in measurements:
        m = m if isinstance(m, dict) else m.__dict__ | {"gb_per_s": m.gb_per_s}
        seconds = m["seconds"]
        spread = m.get("spread")
        out.append(
            {
                "what": m["what"],
                "device": m["device"],
                "median": "—"
                if seconds is None or math.isnan(seconds)
                else fmt_in(seconds, "µs", grouping=True),
                "spread (IQR)": "" if spread is None else fmt_in(spread, "µs", grouping=True),
                "GB/s": "" if not m.get("gb_per_s") else f"{m['gb_per_s']:.2f}",
                "note": m.get("note", ""),
            }
        )
    return out


def _sweep_rows(sweep: list[dict]) -> list[dict]:
    """One row per size, one column per direction and memory kind (GB/s)."""
    by_size: dict[int, dict] = {}
    for row in sweep:
        line = by_size.setdefault(row["nbytes"], {"size": fmt_bytes(row["nbytes"])})
        rate = row.get("gb_per_s")
        line[f"{row['direction']}, {row['memory']} (GB/s)"] = "" if not rate else f"{rate:.2f}"
    return [by_size[n] for n in sorted(by_size)]


def _sweep_table(sweep: list[dict]) -> None:
    st.markdown("**Copy speed by size** (the same machine and run)")
    st.caption(
        "Small copies are dominated by the fixed cost of starting one, so their GB/s is low; "
        "from a few MB on, a copy runs near the link's speed. Pinned (page-locked) host memory "
        "skips the driver's staging copy, so it is faster than pageable memory."
    )
    table(_sweep_rows(sweep))


MEASURED_KEY = "devices_measured"  # {"device", "rows", "count"}: the latest measurement
CPU_DIFFERS = (
    "Where a CPU behaves unlike a GPU: a CPU has no queue of launched work, so `.item()`, "
    "`print`, `.numpy()` and `.cpu()` wait for nothing and those rows differ only by their own "
    "small step and noise; and a small add costs a call into PyTorch rather than a kernel "
    "launch, so many small adds lose to one large one here too, by less than on a GPU."
)


def _costs(simulated: bool) -> None:
    st.header("What moving data costs", divider="gray")
    device = "cpu" if simulated else "cuda:0"
    st.markdown(
        "Host↔device copy bandwidth (pageable and pinned memory), the hidden synchronisations "
        "(`.item()`, `print`, `.numpy()`, `.cpu()` wait for queued GPU work), and one large "
        "operation against many small ones. Measured live on this machine: warm-up first, then "
        "the median; CUDA events and synchronize on a GPU, perf_counter on the CPU."
    )
    kept = st.session_state.get(MEASURED_KEY)
    if kept and kept["device"] != device:
        kept = None
    label = f"Measure again on {device}" if kept else f"Measure on {device}"
    if st.button(label, icon=":material/speed:", key="measure"):
        with st.spinner("Measuring in a worker process…"):
            try:
                kept = {"device": device, "rows": _rows(host.measure_transfers(device)), "count": 0}
                kept["count"] = st.session_state.get(MEASURED_KEY, {}).get("count", 0) + 1
                st.session_state[MEASURED_KEY] = kept
            except (JobFailed, RuntimeError) as exc:  # RuntimeError: util.busy.Busy too
                st.error(f"Could not measure now: {escape(exc)}")
    if kept:
        st.caption(
            f"Measurement {kept['count']} of this session: the median of several repeats after "
            "a warm-up, each into outputs made beforehand (no allocation is timed); the spread "
            "is their interquartile range. Measure again to see how much they move."
        )
        table(kept["rows"])
        if device == "cpu":
            st.caption(f"{CPU_DIFFERS} The CPU rows are {transfer_reference.CPU_THREADS_NOTE}.")
    try:
        reference = load_reference(
            transfer_reference.REFERENCE_PATH, transfer_reference.REFERENCE_FORMAT
        )
    except ReferenceFileError as exc:
        st.error(
            f"The file of recorded GPU numbers is not valid, so none are shown: {escape(exc)}. "
            f"Record it again on a machine with a GPU with `{transfer_reference.RECORD_COMMAND}`."
        )
        return
    if reference is None:
        st.info(
            "**No recorded GPU numbers yet.** No GPU was available when this page was built, "
            "and gradviz does not make numbers up. On a machine with a CUDA GPU, record "
            f"them with `{transfer_reference.RECORD_COMMAND}`; they are then shown here with the device "
            "and date they were measured on.",
            icon=":material/info:",
        )
    else:
        st.markdown(
            f"**Recorded on {reference['device_name']} ({reference['device']}), "
            f"{reference['measured_on']}, torch {reference['torch']}**"
        )
        table(_rows(reference["measurements"]))
        if reference.get("sweep"):
            _sweep_table(reference["sweep"])
