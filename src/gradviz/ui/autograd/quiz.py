"""A quiz link's gradients (`?quiz=1`): hidden on the whole page until the class reveals
them. The viewer's own quiz asks for them meanwhile; the tables, the walk-through, the plain
picture, the gradient check, the downloads and the values of bare expressions after the
first backward() see the result without them (`masked`), and
the page's "Reveal gradients" button shows them everywhere, the viewer included."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from gradviz.graph.model import BackwardRecord, TensorInfo
from gradviz.program.results.trace import Trace
from gradviz.ui.autograd import graph_viewer

HIDDEN = "?"  # what stands for a gradient while the quiz hides it


def reveal_button() -> None:
    """In a quiz, while the gradients are hidden: the button that shows them everywhere."""
    if not graph_viewer.gradients_hidden():
        return
    st.info(
        "Quiz: the gradients are hidden on this page until you reveal them (answer them in "
        "the viewer's quiz first).",
        icon=":material/quiz:",
    )
    st.button("Reveal gradients", icon=":material/visibility:", on_click=_reveal)


def _reveal() -> None:
    st.session_state[graph_viewer.REVEALED] = True


def shown(trace: Trace) -> Trace:
    """`trace` as the page shows it: without its gradients while a quiz hides them."""
    return masked(trace) if graph_viewer.gradients_hidden() else trace


def masked(trace: Trace) -> Trace:
    """`trace` with every gradient replaced by HIDDEN (a copy: the cached result is kept)."""
    copies: dict[int, TensorInfo] = {}

    def hide(t: TensorInfo) -> TensorInfo:
        if id(t) not in copies:
            had = t.grad is not None or t.grad_preview is not None
            copies[id(t)] = replace(
                t, grad=None, grad_preview=HIDDEN if had else None, grad_size=None
            )
        return copies[id(t)]

    graph = trace.graph
    if graph is not None:
        graph = graph.with_tensors([hide(t) for t in graph.tensors])
    return replace(
        trace,
        tensors=[hide(t) for t in trace.tensors],
        graph=graph,
        backward=[_record(r) for r in trace.backward],
        updates=[replace(u, after=HIDDEN) for u in trace.updates],  # after - before: the step
        shown=_outputs(trace),
    )


def _outputs(trace: Trace) -> list:
    """The bare expressions' values, each one below the program's first backward() hidden
    (`x.grad`, or a weight an optimizer changed, would give the answer)."""
    lines = [r.line for r in trace.backward if r.origin == "program" and r.line is not None]
    if not lines:
        return trace.shown
    first = min(lines)
    return [replace(s, text=HIDDEN) if s.line > first else s for s in trace.shown]


def _record(record: BackwardRecord) -> BackwardRecord:
    steps = [
        replace(s, upstream=[HIDDEN] * len(s.upstream), produced=[HIDDEN] * len(s.produced))
        for s in record.steps
    ]
    return replace(record, steps=steps)
