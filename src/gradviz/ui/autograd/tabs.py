"""The tabs beside the Autograd page's program: the graph (graph_tab), tensors, the backward
walk-through, the gradient check, export and the share link."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from gradviz.graph.higher_order import drawing as built
from gradviz.graph.model import DrawOptions
from gradviz.graph.render import RenderUnavailable, dot_available, draw
from gradviz.graph.rules import rule_for
from gradviz.graph.slides.export import file_stem
from gradviz.program.results.trace import Trace
from gradviz.services.cache import cached_bytes
from gradviz.services.programs import check_isolated
from gradviz.ui.autograd import graph_tab, graph_viewer, quiz, slides, tensors
from gradviz.ui.autograd.state import drawing, share_params
from gradviz.ui.common import KEEP, table
from gradviz.ui.visitor import visitor_key, wait_shown
from gradviz.util.mdtext import code, escape, message

SLIDE = "Slide (16:9)"
MIME = {
    "svg": "image/svg+xml",
    "png": "image/png",
    "pdf": "application/pdf",
    "dot": "text/vnd.graphviz",
}


TABS = ["Graph", "Tensors", "Backward walk-through", "Gradient check", "Export", "Share"]
TAB_KEY = "graph_tab"  # the open tab (st.tabs' state: its label)


def graph_and_tabs(trace: Trace, source: str, whole: Trace) -> None:
    """The tabs for `trace` (one backward call's view of `whole`, or `whole` itself); the
    gradient check compares the whole run's gradients (after its last call). In a quiz
    whose gradients are hidden, everything but the viewer shows the result without them.

    The Graph tab is always made (the viewer stays loaded); the others only while open:
    opening one runs the page again (Streamlit's lazy tabs), so a first view makes and sends
    the graph alone, not tables, downloads and links nobody has asked for yet."""
    plain = quiz.shown(trace)  # the result without its gradients while a quiz hides them
    record = plain.backward[-1] if plain.backward else None
    tabs = st.tabs(TABS, key=TAB_KEY, on_change="rerun")
    highlight, done = _step_marks(record)
    if tabs[2].open:
        with tabs[2]:
            _walk_through(record, plain.graph)
    options = drawing()
    # On the page the legend sits under the drawing (the graph gets the width);
    # exported drawings carry it inside, for slides.
    on_page = replace(options, legend=False)
    shown = graph_viewer.folded(trace, options.view)  # layers closed in the viewer: one node each
    dot = draw(shown, on_page, highlight=highlight, done=done)
    picture = (
        dot if plain is trace else draw(quiz.masked(shown), on_page, highlight=highlight, done=done)
    )
    with tabs[0]:
        graph_tab.tab(
            shown,
            source,
            dot,
            highlight,
            picture,
            lambda: _step_buttons(record, plain.graph),
            STEP_ROW_PX if record and record.steps else 0,
        )
    if tabs[1].open:
        with tabs[1]:
            tensors.tensors_tab(plain)
    if tabs[3].open:
        with tabs[3]:
            if plain is not trace:
                st.info("The gradient check shows the gradients: reveal them first (quiz).")
            else:
                _gradient_check(whole, source, whole.backward[-1] if whole.backward else None)
    if tabs[4].open:
        with tabs[4]:
            _export(draw(plain, options), plain, options)
            graph_viewer.download(
                trace,
                draw(trace, on_page),
                options,
                lambda d: cached_bytes(d, "svg", 1.0, visitor_key()),
            )
            slides.downloads(plain, options)
    if tabs[5].open:
        with tabs[5]:
            _share_tab(source)


def _step_marks(record) -> tuple[str | None, frozenset]:
    """The walk-through step's node to highlight and those done before it, from the step
    chosen (kept while its tab is closed); none before backward or at step 0."""
    if not (record and record.steps):
        return None, frozenset()
    steps = record.steps
    if st.session_state.get("step", 0) > len(steps):
        st.session_state.step = 0
    k = st.session_state.get("step", 0)
    if not k:
        return None, frozenset()
    return steps[k - 1].node, frozenset(s.node for s in steps[: k - 1])


def step_name(step, graph) -> str:
    """A walk-through row's name: its backward function and the line of the tensor that
    function made (`AddBackward0 (c = b + 3)`), or the leaf whose .grad it fills."""
    fn = step.fn.split("::")[-1]
    if graph is None:
        return fn
    nodes = {n.id: n for n in graph.nodes}
    node = nodes.get(step.node)
    if node is not None and node.kind == "tensor":
        info = graph.tensor_info(node.tensor)
        return f"{fn} ({info.name}.grad)" if info is not None else fn
    for edge in graph.edges:
        made = nodes.get(edge.dst) if edge.src == step.node else None
        info = graph.tensor_info(made.tensor) if made is not None else None
        if info is not None and info.name:
            return f"{fn} ({info.name} = {info.expr})" if info.expr else f"{fn} ({info.name})"
    return fn


STEP_ROW_PX = 64  # the step buttons' row under the viewer, with the gap above it


def _move_step(by: int, last: int) -> None:
    st.session_state.step = max(0, min(last, st.session_state.get("step", 0) + by))


def _step_buttons(record, graph) -> None:
    """Under the graph: step backward's walk-through here, its node highlighted in the viewer
    (the same step as the walk-through tab's slider)."""
    if not (record and record.steps):
        return
    steps, k = record.steps, st.session_state.get("step", 0)
    back, ahead, where = st.columns([1, 1, 4], vertical_alignment="center")
    back.button(
        "Step",
        icon=":material/chevron_left:",
        key="step_back",
        disabled=k <= 0,
        on_click=_move_step,
        args=(-1, len(steps)),
        help="the walk-through's step before",
    )
    ahead.button(
        "Step",
        icon=":material/chevron_right:",
        key="step_ahead",
        disabled=k >= len(steps),
        on_click=_move_step,
        args=(1, len(steps)),
        help="backward's next step, highlighted in the graph",
    )
    if k:
        where.caption(
            f"Walk-through step {k} of {len(steps)}: {code(step_name(steps[k - 1], graph))}"
        )
    else:
        where.caption(f"Walk through backward's {len(steps)} steps in the graph.")


def _walk_through(record, graph) -> None:
    """The backward walk-through tab: the step slider and the order autograd ran."""
    if not (record and record.steps):
        st.info("Run backward to see the order autograd runs its backward functions.")
        return
    steps = record.steps
    st.markdown(
        f"Backward from **{code(record.target)}** ran these {len(steps)} functions, in this order "
        "(each receives the gradient of the output, *upstream*, and passes one to each input):"
    )
    k = st.slider(
        "Step",
        0,
        len(steps),
        key="step",
        help="0 shows the graph before backward starts",
        persist_state=KEEP,
    )
    if k:
        step = steps[k - 1]
        st.markdown(f"**Step {k}:** {code(step_name(step, graph))} — {escape(rule_for(step.fn))}")
        st.markdown(
            f"upstream: {code(', '.join(step.upstream))} → gradients for inputs: "
            f"{code(', '.join(step.produced) or '(into .grad)')}"
        )
    second = graph is not None and built.marked(graph)
    if second:
        st.caption(escape(built.summary(graph, [record])))
    table(
        [
            {
                "": "▶" if s.index + 1 == k else "",
                "step": s.index + 1,
                "function": step_name(s, graph),
                **({"graph": built.step_graph(s.node, graph)} if second else {}),
                "rule": rule_for(s.fn),
                "upstream": ", ".join(s.upstream),
                "gradients out": ", ".join(s.produced),
            }
            for s in steps
        ]
    )


def _share_tab(source: str) -> None:
    st.markdown(
        "This page's address holds the program and view options: copy it to share exactly this graph."
    )
    url = getattr(st.context, "url", None) or ""
    if url:
        from urllib.parse import urlencode

        st.code(url.split("?")[0] + "?" + urlencode(share_params(source)), language=None)
        st.markdown("The same graph opened in quiz mode (gradients hidden until answered):")
        quiz = {**share_params(source), **graph_viewer.QUIZ_PARAMS}
        st.code(url.split("?")[0] + "?" + urlencode(quiz), language=None)


def _gradient_check(trace: Trace, source: str, record) -> None:
    if record is None:
        st.info(
            "Run backward first; the check compares the gradients shown with finite differences."
        )
        return
    if not st.button("Check gradients (float64 finite differences)", icon=":material/fact_check:"):
        return
    shown = {t.name: t.grad for t in trace.tensors if t.is_leaf and t.requires_grad}
    with st.spinner("Re-running the program with nudged inputs…"), wait_shown():
        result = check_isolated(
            source, record.target, shown, ones=st.session_state.ones, visitor=visitor_key()
        )
    (st.success if result.ok else st.error)(message(result.message))
    if result.leaves:
        table(
            [
                {
                    "leaf": c.name,
                    "shown grad": str(c.shown),
                    "finite differences": str(c.numerical)[:200],
                    "max |diff|": c.max_abs_diff,
                    "ok": c.ok,
                }
                for c in result.leaves
            ]
        )


def _export(dot: str | None, trace: Trace, options: DrawOptions) -> None:
    if dot is None:
        st.info("Nothing to export in this view.")
        return
    c1, c2 = st.columns(2)
    fmt = c1.radio(
        "Format",
        ["svg", "png", "pdf", "dot"],
        horizontal=True,
        key="export_fmt",
        persist_state=KEEP,
    )
    size = c2.radio(
        "Size",
        ["Full size", SLIDE],
        horizontal=True,
        key="export_size",
        persist_state=KEEP,
        help="Slide (16:9): 1920x1080 px or a 13.333x7.5 in page, text at least 18 px.",
    )
    if size == SLIDE:
        slides.slide_export(trace, fmt, options)
        return
    scale = c2.select_slider(
        "PNG scale",
        [1.0, 2.0, 3.0, 4.0],
        value=2.0,
        key="export_scale",
        disabled=fmt != "png",
        persist_state=KEEP,
    )
    if fmt != "dot" and not dot_available():
        st.warning(
            "SVG, PNG and PDF export need Graphviz's `dot` program, which is not installed on this "
            "server. Install Graphviz (Debian/Ubuntu: `sudo apt-get install graphviz`; macOS: "
            "`brew install graphviz`), or download the DOT source below and render it elsewhere."
        )
        fmt = "dot"
    try:
        data = cached_bytes(dot, fmt, scale if fmt == "png" else 1.0, visitor_key())
    except RenderUnavailable as exc:
        st.error(message(exc))
        return
    st.download_button(
        f"Download {fmt.upper()}",
        data,
        file_name=f"{file_stem(trace.graph, 'graph')}.{fmt}",
        mime=MIME[fmt],
        icon=":material/download:",
        on_click="ignore",
    )
    st.caption(
        "The same drawing from the command line: `python -m gradviz render PROGRAM.py -o graph.svg`."
    )
