"""The autograd page's picker for a program that ran backward several times (a training
loop): which call's graph the graph, Tensors and walk-through tabs show (the last by
default, or the whole run), that call's gradients, and the parameters before and after the
optimizer step that followed it. The calls are gradviz.program.results.calls' (kept by the worker:
the first and the last few)."""

from __future__ import annotations

import streamlit as st

from gradviz.program.results.calls import BackwardCall, OptimizerStep, ValueSummary
from gradviz.program.results.trace import Trace
from gradviz.ui.autograd import graph_viewer, quiz
from gradviz.ui.common import KEEP, table
from gradviz.util.mdtext import code, message

WHOLE_RUN = 0  # the picker's choice for every call's graph together


def pick(trace: Trace) -> tuple[Trace, BackwardCall | None]:
    """The picker (only when the program ran backward more than once), the result as the
    chosen call shows it, and the call (None: the whole run), whose optimizer steps
    `steps` shows under the graph."""
    calls = trace.calls
    if calls.count < 2 or not calls.kept:
        return trace, None
    numbers = [c.number for c in calls.kept] + [WHOLE_RUN]
    this_run = (trace.source, calls.count)
    if (
        st.session_state.get("backward_call_run") != this_run
        or st.session_state.get("backward_call") not in numbers
    ):  # another program (or the same one run differently): its last call
        st.session_state.backward_call_run = this_run
        st.session_state.backward_call = calls.kept[-1].number
    titles = {c.number: c.title(calls.count) for c in calls.kept}
    titles[WHOLE_RUN] = "the whole run (every call's graph together)"
    chosen = st.selectbox(
        "Backward call to show",
        numbers,
        format_func=titles.get,
        key="backward_call",
        persist_state=KEEP,
        help="The graph, the Tensors tab and the walk-through follow this call: the values "
        "its tensors had then, and each leaf's .grad right after it.",
    )
    left_out = calls.left_out()
    if left_out:
        st.caption(message(left_out) + ".")
    call = calls.call(chosen) if chosen != WHOLE_RUN else None
    if call is None:
        return trace, None
    _call_summary(call)
    if call is not calls.kept[-1]:
        st.caption(
            "The Gradient check tab checks the gradients the program ends with (after its "
            "last backward call)."
        )
    return trace.at_call(call.number), call


def _call_summary(call: BackwardCall) -> None:
    if call.grads and not graph_viewer.gradients_hidden():  # a quiz's gradients: not yet
        shown = ", ".join(f"`{g.name}` {_norm(g)}" for g in call.grads[:8])
        more = f" and {len(call.grads) - 8} more" if len(call.grads) > 8 else ""
        accumulated = (
            " (added to what .grad already held: no zero_grad() before this call)"
            if call.record.accumulated
            else ""
        )
        st.caption(message(f"Gradient norms right after this call{accumulated}: {shown}{more}."))


def steps(call: BackwardCall | None) -> None:
    """The parameters before and after the optimizer steps that followed `call`, folded
    under the graph: a network's table is a dozen rows, and the graph comes first."""
    if call is None or not call.steps:
        return
    numbers = ", ".join(str(s.number) for s in call.steps)
    with st.expander(f"Parameters before and after optimizer step {numbers}", expanded=False):
        for step in call.steps:
            _step_table(step)


def _step_table(step: OptimizerStep) -> None:
    hidden = graph_viewer.gradients_hidden()  # a quiz: the step's change gives the gradient
    more = f" ({step.more} more parameters not listed)" if step.more else ""
    st.markdown(
        f"**Parameters before and after step {step.number}** ({code(step.optimizer)}, line "
        f"{step.line}, after backward call {step.after_call}){more}"
    )
    table(
        [
            {
                "parameter": b.name,
                "shape": str(b.shape),
                "before": b.preview,
                "after": quiz.HIDDEN if hidden else a.preview,
                "norm before": _norm(b),
                "norm after": quiz.HIDDEN if hidden else _norm(a),
            }
            for b, a in zip(step.before, step.after, strict=False)
        ]
    )


def _norm(v: ValueSummary) -> str:
    return "" if v.norm is None else f"‖{v.norm:.4g}‖"
