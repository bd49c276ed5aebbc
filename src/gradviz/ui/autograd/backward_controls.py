"""The Autograd page's backward controls: what the program's own backward calls did, the output
to run backward on, and the ones-like gradient for a non-scalar output."""

from __future__ import annotations

import math

import streamlit as st

from gradviz.graph.model import TensorInfo
from gradviz.program.results.trace import Trace
from gradviz.ui.common import KEEP
from gradviz.util.mdtext import code, message


def _ran_backward(ran: list) -> str:
    """The program's backward calls, one entry per line and tensor: a training loop's
    thousand calls are one entry with their count."""
    counts: dict[tuple, int] = {}
    for b in ran:
        counts[(b.target, b.line)] = counts.get((b.target, b.line), 0) + 1
    return ", ".join(
        code(f"{target}.backward()") + f" (line {line}" + (f", {n:,} times)" if n > 1 else ")")
        for (target, line), n in counts.items()
    )


def _accumulated(ran: list) -> list[str]:
    """Per line, the leaves whose `.grad` its backward calls added to (one message for a
    loop's calls, naming how many of them added)."""
    lines: dict[int | None, tuple[list, dict]] = {}  # line -> (its calls, leaves named)
    for b in ran:
        calls, names = lines.setdefault(b.line, ([], {}))
        calls.append(b)
        names.update(dict.fromkeys(b.accumulated))
    texts = []
    for line, (calls, names) in lines.items():
        added = sum(1 for b in calls if b.accumulated)
        if not added:
            continue
        listed = ", ".join(f"`{n}`" for n in list(names)[:8])
        more = f" and {len(names) - 8} more" if len(names) > 8 else ""
        who = (
            "this backward"
            if len(calls) == 1
            else f"{added:,} of its {len(calls):,} backward calls"
        )
        texts.append(
            f"Line {line}: {who} added to the gradients {listed}{more} already held: .grad "
            "accumulates until zero_grad() (or `.grad = None`)."
        )
    return texts


def controls(trace: Trace) -> None:
    candidates = [t.name for t in trace.tensors if t.requires_grad]
    ran = [b for b in trace.backward if b.origin == "program"]
    if ran:
        st.info("The program itself ran backward: " + _ran_backward(ran), icon=":material/undo:")
    for text in _accumulated(ran):
        st.info(message(text), icon=":material/add_circle:")
    if not candidates:
        return
    names = list(dict.fromkeys(reversed(candidates)))
    state = st.session_state
    preferred = state.backward_target or state.get("backward_choice")
    if (
        not state.backward_target
        and preferred in names
        and state.get("backward_choice_source") != trace.source
        and not _loss_like(trace.tensor(preferred))
    ):  # chosen for another program, where it was a loss; here a leaf or not a scalar
        preferred = None
    # The program stopped (an error) before it made the chosen output: keep the choice.
    kept = trace.error is not None and preferred is not None and preferred not in names
    if kept:
        names = [preferred, *names]
    # Stacked, not in columns: the page's left column is narrow, and labels stay whole.
    target = st.selectbox(
        "Output to run backward on",
        names,
        index=names.index(preferred) if preferred in names else _first_scalar(trace, names),
    )
    if trace.error is None:
        state.backward_choice = target
        state.backward_choice_source = trace.source
    info = trace.tensor(target)
    st.button(  # a callback, not a rerun: the graph is drawn above this button's run
        "Run backward",
        icon=":material/undo:",
        type="primary",
        disabled=info is None,
        help=f"The program stopped before it made {code(target)}." if info is None else None,
        on_click=_run_backward,
        args=(target,),
    )
    # After an error, only the output backward ran on is explained (its error may be why).
    explain = trace.error is None or target == state.backward_target
    if explain and info is not None and info.shape and max(1, math.prod(info.shape)) > 1:
        st.caption(
            f"{code(target)} has shape {tuple(info.shape)}: PyTorch says *grad can be implicitly "
            "created only for scalar outputs*. backward() needs to know how to weigh each "
            "element; a ones-like gradient weighs them equally (the same as "
            f"{code(f'{target}.sum().backward()')})."
        )
        st.checkbox(
            f"Use {code(f'torch.ones_like({target})')} as the gradient",
            key="ones",
            persist_state=KEEP,
        )


def _run_backward(target: str) -> None:
    st.session_state.backward_target = target
    st.session_state.step = 0


def _loss_like(t: TensorInfo | None) -> bool:
    """A scalar that autograd made (not a leaf) and tracks: what backward usually starts on."""
    return t is not None and t.requires_grad and not t.is_leaf and math.prod(t.shape or []) == 1


def _first_scalar(trace: Trace, names: list[str]) -> int:
    """Where the selector starts without a choice (`names`: the last made first): the last
    scalar that autograd made (a `loss`: not a leaf, requires grad), else the last scalar,
    else the last tensor autograd made, else the last tensor."""
    infos = [trace.tensor(name) for name in names]

    def first(wanted) -> int | None:
        return next((i for i, t in enumerate(infos) if t is not None and wanted(t)), None)

    for wanted in (
        _loss_like,
        lambda t: t.requires_grad and math.prod(t.shape or []) == 1,
        lambda t: t.requires_grad and not t.is_leaf,
    ):
        found = first(wanted)
        if found is not None:
            return found
    return 0
