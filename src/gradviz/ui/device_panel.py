"""Device pieces of the autograd page: move leaves to another device, where tensors live,
device errors explained. Shared by the Autograd and Devices pages."""

from __future__ import annotations

import streamlit as st

from gradviz.devices import info as device_info
from gradviz.graph.dot import DEVICE_COLORS, OTHER_DEVICE_COLOR
from gradviz.program.results.reports import DeviceErrorDetails
from gradviz.program.share import ALL_LEAVES
from gradviz.services import host
from gradviz.services.jobs import JobFailed
from gradviz.ui.common import KEEP, table
from gradviz.util.format import fmt_bytes
from gradviz.util.mdtext import code, escape, html_text, message


def overrides() -> tuple[tuple[str, str], ...]:
    """The moves the user asked for, as hashable RunOptions.device_overrides items."""
    target = st.session_state.get("move_to")
    if not target:
        return ()
    if st.session_state.get("move_all"):
        return ((ALL_LEAVES, target),)
    return tuple((name, target) for name in sorted(st.session_state.get("move_leaves") or []))


def controls(trace) -> None:
    """Pick leaf tensors (or all) and a device; the page reruns the program with them moved."""
    try:
        facts = host.facts_now()
    except JobFailed as exc:  # the program still shows; moving leaves waits for a worker
        st.caption(f"Moving tensors between devices is unavailable right now: {escape(exc)}")
        return
    if facts is None:  # the first worker is starting; the sidebar reruns the page when known
        st.caption("Moving tensors between devices: asking a worker what this host offers…")
        return
    simulated = facts.simulated
    choices = facts.device_choices()
    leaves = list(dict.fromkeys(t.name for t in trace.tensors if t.is_leaf))
    chosen = [n for n in st.session_state.get("move_leaves") or [] if n in leaves]
    if chosen != (st.session_state.get("move_leaves") or []):
        st.session_state.move_leaves = chosen
    if st.session_state.get("move_to") not in choices:  # first visit, or a link's device
        st.session_state.move_to = "cuda:0" if "cuda:0" in choices else choices[0]
    with st.expander("Devices: move leaf tensors and rerun", expanded=bool(overrides())):
        st.multiselect(
            "Leaf tensors to move",
            leaves,
            key="move_leaves",
            persist_state=KEEP,
            disabled=bool(st.session_state.get("move_all")),
            help="The program's text is not changed: these leaves are made on the chosen device.",
        )
        c2, c3 = st.columns([3, 2], vertical_alignment="bottom")
        c2.selectbox(
            "to device",
            choices,
            key="move_to",
            persist_state=KEEP,
            format_func=lambda d: device_info.device_label(d, simulated),
        )
        c3.checkbox("all leaves", key="move_all", persist_state=KEEP)
        if simulated:
            st.caption(
                "This host has no CUDA GPU: cuda:0 and cuda:1 are **simulated**. Values are "
                "computed on the CPU; which device each tensor lands on, and every device error, "
                "come from PyTorch itself, run on simulated CUDA. See the Devices page."
            )


def moves(trace) -> None:
    for m in trace.moves:
        st.info(
            # Devices are PyTorch's own names (torch.device parsed them); the name is quoted.
            f"Moved {code(m.name)}"
            + f" (line {m.line}) from {m.from_device} to "
            + f"**{device_info.device_label(m.to_device, trace.simulated)}**",
            icon=":material/swap_horiz:",
        )
    for note in trace.device_notes:
        st.caption(message(note))


def legend(trace) -> None:
    """Which colour is which device, under the graph (the drawing has the same legend)."""
    present = list(dict.fromkeys(t.device for t in trace.tensors))
    if present == ["cpu"] or not present:
        return
    parts = []
    for dev in present:
        color = DEVICE_COLORS.get(dev, OTHER_DEVICE_COLOR)
        label = html_text(device_info.device_label(dev, trace.simulated))
        parts.append(
            f'<span style="border:3px solid {color};padding:1px 6px;border-radius:4px">'
            f"{label}</span>"
        )
    copies = sum(1 for e in trace.graph.edges if e.copy) if trace.graph is not None else 0
    text = "Devices: " + " ".join(parts)
    if copies:
        text += f" · <b style='color:#d62728'>bold red arrows</b>: {copies} copy between devices"
    st.markdown(text, unsafe_allow_html=True)


def memory(trace) -> None:
    rows = device_info.trace_memory(trace.tensors, trace.simulated)
    if rows:
        st.markdown("**Named tensors per device** (values; gradients where backward ran)")
        table(
            [
                {
                    "device": r["device"],
                    "tensors": r["tensors"],
                    "values": fmt_bytes(r["bytes"]),
                    "gradients": fmt_bytes(r["grad_bytes"]),
                }
                for r in rows
            ]
        )
    if trace.memory:
        st.markdown("**CUDA allocator after the run** (nvidia-smi shows *reserved* plus context)")
        allocator_table(trace.memory)
    elif trace.simulated:
        st.caption(
            "Simulated CUDA has no allocator: the sizes above are what these tensors would take "
            "on the GPU. On a real GPU this shows torch.cuda.memory_allocated / memory_reserved."
        )


def error_details(device: DeviceErrorDetails | None, rule: bool = True) -> None:
    """The device part of an error: where the message came from, who is where, and (unless
    the page already shows them as hint and fix) the rule and the fix as code."""
    if device is None or not device.kind:
        return
    if device.source.startswith("simulated"):
        st.warning(f"Message {message(device.source)}.", icon=":material/memory:")
    else:
        st.caption(f"Message {message(device.source)}.")
    if device.tensors:
        st.markdown(
            "Operands: " + ", ".join(f"{code(name)} on **{dev}**" for name, dev in device.tensors)
        )
    if rule:
        st.markdown(f"**Rule:** {message(device.rule)}")
        if device.fix_code:
            st.code(device.fix_code, language="python")


def allocator_table(rows: list[device_info.CudaMemory]) -> None:
    """Per-device CUDA allocator figures (devices.memory_summary rows, asked of a worker)."""
    table(
        [
            {
                "device": r.device,
                "allocated": fmt_bytes(r.allocated),
                "reserved": fmt_bytes(r.reserved),
                "used (all processes, as nvidia-smi)": fmt_bytes(r.used_by_all_processes),
                "total": fmt_bytes(r.total),
            }
            for r in rows
        ]
    )
