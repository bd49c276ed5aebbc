"""Training in several processes (DistributedDataParallel) on the pages: the training page's
"Processes" choice and the Devices page's table of where each rank trains.

Where several GPUs are present the training page offers "all GPUs (DDP)", one process per GPU
(NCCL). On the CPU it offers 2 processes (gloo) only where the host has cores enough for each
rank to keep two threads (gradviz.training.settings.ddp_cpu_reason); elsewhere it says what DDP
would do and why it is not offered. A public host offers none (each run would take several
processes of a shared container). The runs themselves are gradviz.training.distributed's, in
the training job's worker. No torch here: the GPU count comes from host.facts().
"""

from __future__ import annotations

import streamlit as st

from gradviz.devices.info import HostFacts
from gradviz.services import host
from gradviz.training.settings import ddp_cpu_reason, rank_placement
from gradviz.ui.common import table
from gradviz.util import settings
from gradviz.util.mdtext import escape
from gradviz.util.resources import available_cpus

ONE = "one process"
CHOICE_KEY = "training_processes"
PLACEMENT_KEY = "training_ddp_placement"  # the ranks of the run configured on the training page
WHAT_DDP_DOES = (
    "DDP (DistributedDataParallel) trains one copy of the network per process, each on its own "
    "share of the images, and averages the gradients of all copies after every backward pass "
    "(NCCL between GPUs, gloo on the CPU): N processes with batch B/N take the steps of one "
    "process with batch B."
)


def _facts() -> HostFacts | None:
    try:
        return host.facts()
    except Exception:  # no worker could answer: the device choice already says so
        return None


def _gpu_names(facts: HostFacts) -> tuple[str, ...]:
    return tuple(d.name for d in facts.devices if d.kind == "cuda" and not d.simulated)


def process_options(
    facts: HostFacts | None, device_choice: str, cpus: int, public: bool = False
) -> tuple[dict[str, tuple[int, str]], str | None]:
    """The "Processes" choices ({label: (processes, device type)}, ONE first) and a note saying
    what DDP would do where it is not offered (None when it is)."""
    options = {ONE: (1, "")}
    if public:
        return options, "Training in several processes is for a host of your own (this is public)."
    gpus = facts.cuda_count if facts is not None and facts.cuda_available else 0
    on_gpu = device_choice == "cuda" or (device_choice == "auto" and gpus > 0)
    if on_gpu:
        if gpus >= 2:
            options[f"all GPUs (DDP, {gpus} processes)"] = (gpus, "cuda")
            return options, None
        return options, f"{WHAT_DDP_DOES} This host has one GPU: one process per GPU is this run."
    if device_choice not in ("auto", "cpu"):
        return (
            options,
            f"{WHAT_DDP_DOES} Here it runs on CUDA GPUs or the CPU, not {device_choice}.",
        )
    reason = ddp_cpu_reason(cpus)
    if reason is None:
        options["2 CPU processes (DDP, gloo)"] = (2, "cpu")
        return options, None
    return options, (
        f"{WHAT_DDP_DOES} Not offered here: {reason}. "
        "`python -m gradviz train --nproc 2 --device cpu` runs it anyway."
    )


def processes_field(device_choice: str) -> int:
    """Draw the choice (or the note) under the device; return how many processes to train in."""
    facts = _facts()
    options, note = process_options(facts, device_choice, available_cpus(), settings.public_host())
    if len(options) == 1:
        st.session_state.pop(PLACEMENT_KEY, None)
        st.caption(escape(note) if note else "")
        return 1
    if st.session_state.get(CHOICE_KEY) not in options:
        st.session_state[CHOICE_KEY] = ONE
    label = st.radio("Processes", list(options), key=CHOICE_KEY, horizontal=True)
    nproc, kind = options[label]
    if nproc == 1:
        st.session_state.pop(PLACEMENT_KEY, None)
        return 1
    lines = rank_placement(nproc, kind, _gpu_names(facts) if facts else ())
    st.session_state[PLACEMENT_KEY] = lines
    st.caption(
        f"{WHAT_DDP_DOES} The batch size is the total over all processes. "
        + escape("; ".join(lines))
        + "."
    )
    return nproc


def placement_section(facts: HostFacts) -> None:
    """The Devices page: where each rank trains, for the run configured on the training page,
    else for the run DDP would make on this host."""
    st.header("Training in several processes", divider="gray")
    lines = st.session_state.get(PLACEMENT_KEY)
    if lines:
        st.caption("The ranks of the run chosen on the CIFAR-10 training page:")
    else:
        options, note = process_options(facts, "auto", available_cpus(), settings.public_host())
        runs = [value for value in options.values() if value[0] > 1]
        if not runs:
            st.caption(escape(note or ""))
            return
        nproc, kind = runs[0]
        lines = rank_placement(nproc, kind, _gpu_names(facts))
        st.caption(
            f"{WHAT_DDP_DOES} On this host, choosing it on the training page places the ranks so:"
        )
    table([{"rank": line.split(" -> ")[0], "trains on": line.split(" -> ")[1]} for line in lines])
