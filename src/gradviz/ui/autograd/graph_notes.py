"""Captions under the Autograd page's drawing that explain what its labels and arrows mean:
dashed arrows (where the program cut the graph, inputs without grad) and names such as
`h·L12` or `x = h`."""

from __future__ import annotations

import streamlit as st

from gradviz.graph.higher_order import drawing as built
from gradviz.program.results.trace import Trace
from gradviz.util.mdtext import code, escape


def notes(trace: Trace) -> None:
    graph = trace.graph
    if graph is None:
        return
    name_notes(trace)
    second = built.summary(graph, trace.backward) or built.building_note(graph, trace.backward)
    if second:
        st.caption(escape(second))
    kinds = {e.kind for e in graph.edges}
    if kinds - {"data", "gradient"}:
        st.caption(
            "Dashed arrows are not part of autograd's graph, and no gradient flows along "
            "them: *detached* and *no_grad* mark where the program cut the graph (a "
            "`detach()` result, or one made under `torch.no_grad()`, from the tensor it was "
            "made of); *input (no grad)* is a tensor that does not require grad going into "
            "the function that used it."
        )


def _example(labels: list[str], mark: str) -> str | None:
    return next((label for label in labels if mark in label), None)


def name_notes(trace: Trace) -> None:
    """What `name·L12`, `name[2]` and `x = h` mean, with an example from this graph."""
    labels = [t.label for t in trace.tensors]
    parts = []
    line = _example(labels, "·L")
    if line:
        name, _, rest = line.split(" = ")[0].partition("·L")
        number = "".join(ch for ch in rest if ch.isdigit())
        parts.append(
            f"{code(line.split(' = ')[0])} is {code(name)} as the name at line {number}: a name bound "
            "more than once gets a node per line, each with the value it had then (`y += 1` "
            "on a tensor autograd tracks is a new node; a tensor changed in place without "
            "a new node says so in its note on the Tensors tab)"
        )
    if _example(labels, "["):
        parts.append("`name[2]` is the name in the loop's pass 2")
    alias = _example(labels, " = ")
    if alias:
        parts.append(
            f"{code(alias)} is one tensor, two names (the program assigned one to the other)"
        )
    if parts:
        st.caption("Names: " + "; ".join(parts) + ".")
