"""Autograd playground page: type a program, see its graph, run backward, export it."""

from __future__ import annotations

import base64
import hashlib
import math
import pickle

import streamlit as st

from gradviz.graph.dot import ROLE_TEXT, THEMES
from gradviz.graph.render import RenderUnavailable, dot_available, draw, graph_size, render_bytes
from gradviz.graph.rules import rule_for
from gradviz.program.presets import PRESETS, PRESETS_BY_KEY
from gradviz.program.reports import RunError
from gradviz.program.results import RunOptions, Trace
from gradviz.services import landing
from gradviz.services.programs import check_isolated, run_isolated
from gradviz.ui import backward_calls, device_panel, graph_notes, graph_viewer, slides, tensors
from gradviz.ui.autograd_state import (
    THEME_LABELS,
    graph_theme,
    init_state,
    load_preset,
    share_params,
    update_share_link,
)
from gradviz.ui.common import KEEP, show_unexpected, table
from gradviz.ui.visitor import visitor_key, wait_shown
from gradviz.util.hosting import public_mode
from gradviz.util.mdtext import code, escape, message
from gradviz.util.memo import ByteLRU, SingleFlight
from gradviz.util.plainsize import decoded_size
from gradviz.workers.process import Busy

VIEW_LABELS = {"values": "gradviz (values + grads)", "classic": "torchviz classic"}
RANKDIR_LABELS = {"TB": "top-down", "LR": "left-right"}
GRAPH_ALT = "autograd graph"
# The drawing fits the window's height less the title and the tabs above it.
GRAPH_STYLE = "display:block;max-width:100%;max-height:max(24rem, calc(100vh - 21rem))"
BIG_GRAPH = 300  # nodes; larger graphs are drawn on request
MIME = {
    "svg": "image/svg+xml",
    "png": "image/png",
    "pdf": "application/pdf",
    "dot": "text/vnd.graphviz",
}


# Results kept for every session: bounded in bytes and age, so a few huge results (the
# worker caps one at trace.MAX_RESULT_BYTES) cannot hold the host's memory for long.
RESULTS_BYTES = 64 * 1024 * 1024
PUBLIC_RESULTS_BYTES = 24 * 1024 * 1024
RESULTS_SECONDS = 3600.0


@st.cache_resource(show_spinner=False)
def results() -> ByteLRU[bytes]:
    """The server's one cache of program results, each kept pickled: every session gets its
    own copy, as st.cache_data would give, and the bound counts the real bytes."""
    limit = PUBLIC_RESULTS_BYTES if public_mode() else RESULTS_BYTES
    return ByteLRU(max_bytes=limit, ttl=RESULTS_SECONDS, max_entries=256)


# Each session's latest result, as that session's own copy, so that a rerun (every click)
# does not unpickle it again: bounded in bytes once unpickled (what the server counted as it
# read the result back, util.plainsize) over every session, and in age; a session whose copy
# was dropped unpickles it again from results().
SESSION_RESULTS_BYTES = 256 * 1024 * 1024
PUBLIC_SESSION_RESULTS_BYTES = 48 * 1024 * 1024
SESSION_RESULTS_SECONDS = 900.0


@st.cache_resource(show_spinner=False)
def session_results() -> ByteLRU[tuple[tuple, Trace, int]]:
    """visitor (one per session) -> (result key, that session's Trace, its bytes unpickled)."""
    limit = PUBLIC_SESSION_RESULTS_BYTES if public_mode() else SESSION_RESULTS_BYTES
    return ByteLRU(
        max_bytes=limit, ttl=SESSION_RESULTS_SECONDS, max_entries=1024, size=lambda e: e[2]
    )


def _unpickled(trace: Trace) -> int:
    """The bytes `trace` takes here: as counted when it was read back (run_isolated), or
    counted now."""
    counted = trace.stats.decoded_bytes
    return counted if counted is not None else decoded_size(trace)


@st.cache_resource(show_spinner=False)
def runs_in_flight() -> SingleFlight[tuple[Trace, bytes | None]]:
    """Programs being run now: sessions that submit the same program at the same moment (a
    class running the exercise as given) wait for one run instead of queueing thirty."""
    return SingleFlight()


def run_cached(
    source: str,
    backward: str | None,
    ones: bool,
    retain: bool,
    moves: tuple = (),
    visitor: str = "",
) -> Trace:
    """The program's result, run at most once per program and options while it is cached
    or being run.

    Only successes and the program's own errors are kept and shared: a run whose worker was
    killed (time, memory, a crash) or never started is shown to this session and run again by
    the next. Busy (the visitor's turn did not come) is raised, never cached."""
    options = RunOptions(
        backward=backward,
        backward_ones=ones,
        retain_intermediate=retain,
        device_overrides=dict(moves) or None,
    )
    first = landing.stored(source, options)  # the lesson as a first visit opens it: stored
    if first is not None:
        return first
    key = (hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest(), backward, ones)
    key += (retain, moves)
    mine = session_results().get(visitor) if visitor else None
    if mine is not None and mine[0] == key:
        return mine[1]  # this session's own copy, unpickled once
    cache = results()
    kept = cache.get(key)
    if kept is not None:
        return _keep(visitor, key, pickle.loads(kept))  # pickled by this server itself

    def run() -> tuple[Trace, bytes | None]:
        trace = run_isolated(source, options, raise_busy=True, visitor=visitor)
        if trace.stats.worker is not None:  # run_isolated sets it when the worker did not finish
            return trace, None
        data = pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL)
        cache.put(key, data)
        return trace, data

    (trace, data), own = runs_in_flight().run(key, run, lambda result: result[1] is not None)
    if data is None:
        return trace
    return _keep(visitor, key, trace if own else pickle.loads(data))  # a copy each session


def _keep(visitor: str, key: tuple, trace: Trace) -> Trace:
    """`trace`, kept as `visitor`'s copy of the result `key` (replacing their last one)."""
    if visitor:
        session_results().put(visitor, (key, trace, _unpickled(trace)))
    return trace


# Drawings kept for every session: bounded in bytes, so big PNGs cannot fill the host.
DRAWINGS_BYTES = 128 * 1024 * 1024
PUBLIC_DRAWINGS_BYTES = 32 * 1024 * 1024
DRAWINGS_SECONDS = 3600.0


@st.cache_resource(show_spinner=False)
def drawings() -> ByteLRU[bytes]:
    """The server's one cache of drawings, so a rerun never lays a graph out again."""
    limit = PUBLIC_DRAWINGS_BYTES if public_mode() else DRAWINGS_BYTES
    return ByteLRU(max_bytes=limit, ttl=DRAWINGS_SECONDS, max_entries=256)


@st.cache_resource(show_spinner=False)
def drawings_in_flight() -> SingleFlight[bytes]:
    """Drawings being laid out now: equal graphs asked at the same moment are laid out once
    (the public host lays out one graph at a time)."""
    return SingleFlight()


def cached_bytes(dot: str, fmt: str, scale: float, visitor: str = "") -> bytes:
    """The drawing's bytes, laid out at most once per graph, theme and format; `visitor`
    (who asks) has one layout at a time.

    render_bytes remembers refusals and failures itself, so those are not retried either."""
    key = (hashlib.sha256(dot.encode("utf-8", "surrogatepass")).hexdigest(), fmt, scale)
    cache = drawings()
    data = cache.get(key)
    if data is None:

        def draw_once() -> bytes:
            drawn = render_bytes(dot, fmt, scale, visitor=visitor)
            cache.put(key, drawn)
            return drawn

        data, _ = drawings_in_flight().run(key, draw_once)
    return data


def _submit() -> None:
    preset = PRESETS_BY_KEY.get(st.session_state.get("preset"))
    if preset is not None and st.session_state.program != preset.source:
        st.session_state.preset = None  # the editor no longer holds the preset
    if st.session_state.program != st.session_state.submitted:
        st.session_state.backward_target = None  # the new program opens on its forward graph
        st.session_state.step = 0
    st.session_state.submitted = st.session_state.program


def _show_error(err: RunError, source: str) -> None:
    where = f"Line {err.line}, column {err.col}: " if err.line else ""
    title = err.details.title
    st.error(
        f"**{title + ' — ' if title else ''}{err.kind} error.** {where}{message(err.message)}",
        icon=":material/error:",
    )
    lines = source.splitlines()
    if err.line and 1 <= err.line <= len(lines):
        caret = " " * max((err.col or 1) - 1, 0) + "^"
        st.code(f"{err.line:>3} | {lines[err.line - 1]}\n    | {caret}", language=None)
    for line, col in err.details.also:  # e.g. the in-place change backward tripped over
        if 1 <= line <= len(lines):
            st.caption(f"and line {line}, column {col}:")
            caret = " " * max(col - 1, 0) + "^"
            st.code(f"{line:>3} | {lines[line - 1]}\n    | {caret}", language=None)
    if err.hint:
        # Hints are gradviz's own (a device rule, "did you mean `name`?" among identifiers),
        # Markdown meant as written; the message, which quotes PyTorch and strings, is escaped.
        st.info(err.hint, icon=":material/lightbulb:")
    if err.details.fix:
        # gradviz's own text (explain.EXPLANATIONS), or a device error's fix line, whose names
        # are the program's text: errors.with_devices sets that one as mdtext.code.
        st.success(f"**Fix:** {err.details.fix}", icon=":material/build:")
    device_panel.error_details(err.details.device, rule=False)


def page() -> None:
    init_state()
    landing.warm_in_background()  # the first view's graph is stored; workers start meanwhile
    st.title("Autograd playground")
    st.caption(
        "Type a PyTorch program in a safe subset of Python (functions, loops, `nn.Module` "
        "classes, layers, optimizers, data loaders: the tutorials' own code), see the graph "
        "autograd builds, run backward and watch the gradients arrive."
    )
    for problem in st.session_state.get("share_problems", []):
        st.warning(message(problem))

    # Editor and controls on the left, the graph on the right: the first graph is in view
    # without scrolling, next to the program that made it.
    left, right = st.columns([2, 3], gap="medium")
    with left:
        _editor()
        source = st.session_state.submitted
        trace = _run(source)
    # The right column is filled before the rest of the left one: the graph reaches the
    # browser first (the layout is the same; the controls' values are in session_state).
    if trace is not None:
        with right:  # a loop's calls: one at a time
            _graph_and_tabs(backward_calls.pick(trace), source, trace)
    with left:
        if trace is not None:
            _backward_controls(trace)
            _messages(trace, source)
            graph_viewer.marked_program(source)
            device_panel.controls(trace)
        _options()
    if trace is not None:
        update_share_link(source)


def _run(source: str) -> Trace | None:
    """The program's result, or None with a plain message (never a traceback)."""
    try:
        with wait_shown():  # the place in line and the wait, while the turn has not come
            return run_cached(
                source,
                st.session_state.backward_target,
                st.session_state.ones,
                st.session_state.retain,
                device_panel.overrides(),
                visitor_key(),
            )
    except Busy as exc:  # the visitor's turn did not come: a plain message, input kept
        st.warning(f"Not run yet: {exc}.", icon=":material/hourglass_top:")
    except Exception as exc:  # never a traceback on the page
        show_unexpected(exc, "running the program")
    return None


def _messages(trace: Trace, source: str) -> None:
    """What the run said: moves, the error, PyTorch's warnings, summaries, printed lines."""
    device_panel.moves(trace)
    if trace.error:
        _show_error(trace.error, source)
    for w in trace.warnings:
        st.warning(f"Line {w.line}: PyTorch warns: {message(w.message)}", icon=":material/warning:")
    for note in trace.summary:
        st.info(f"This result is summarised: {message(note)}.", icon=":material/info:")
    if trace.stdout:
        st.code("\n".join(trace.stdout), language=None)


def _editor() -> None:
    """The preset picker and the program's text, run on the form's button."""
    st.selectbox(
        "Preset",
        [p.key for p in PRESETS],
        format_func=lambda k: PRESETS_BY_KEY[k].title,
        key="preset",
        index=None,
        placeholder="Pick a preset…",
        on_change=load_preset,
        persist_state=KEEP,
    )
    if st.session_state.get("preset") in PRESETS_BY_KEY:
        st.caption(PRESETS_BY_KEY[st.session_state.preset].about)
    with st.form("editor", border=False):
        st.text_area("Program", key="program", height=220, persist_state=KEEP)
        st.form_submit_button(
            "Run program", type="primary", on_click=_submit, icon=":material/play_arrow:"
        )


def _options() -> None:
    """How the graph is drawn, and what the run keeps."""
    st.radio(
        "View",
        list(VIEW_LABELS),
        format_func=VIEW_LABELS.get,
        key="view",
        horizontal=True,
        persist_state=KEEP,
    )
    st.radio(
        "Direction",
        list(RANKDIR_LABELS),
        format_func=RANKDIR_LABELS.get,
        key="rankdir",
        horizontal=True,
        persist_state=KEEP,
    )
    st.radio(
        "Theme",
        list(THEME_LABELS),
        format_func=THEME_LABELS.get,
        key="theme",
        horizontal=True,
        persist_state=KEEP,
        help="The drawing's colours; *follow page* draws dark on a dark page.",
    )
    st.checkbox(
        "Show saved tensors",
        key="saved",
        help="What each backward function saved in the forward pass.",
        persist_state=KEEP,
    )
    st.checkbox("Keep intermediate gradients (retain_grad)", key="retain", persist_state=KEEP)


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


def _backward_controls(trace: Trace) -> None:
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


def _first_scalar(trace: Trace, names: list[str]) -> int:
    """Where the selector starts without a choice: the last scalar made, else the last tensor."""
    for i, name in enumerate(names):
        info = trace.tensor(name)
        if info is not None and math.prod(info.shape or []) == 1:
            return i
    return 0


TABS = ["Graph", "Tensors", "Backward walk-through", "Gradient check", "Export", "Share"]
TAB_KEY = "graph_tab"  # the open tab (st.tabs' state: its label)


def _graph_and_tabs(trace: Trace, source: str, whole: Trace) -> None:
    """The tabs for `trace` (one backward call's view of `whole`, or `whole` itself); the
    gradient check compares the whole run's gradients (after its last call).

    The Graph tab is always made (the viewer stays loaded); the others only while open:
    opening one runs the page again (Streamlit's lazy tabs), so a first view makes and sends
    the graph alone, not tables, downloads and links nobody has asked for yet."""
    record = trace.backward[-1] if trace.backward else None
    tabs = st.tabs(TABS, key=TAB_KEY, on_change="rerun")
    highlight, done = _step_marks(record)
    if tabs[2].open:
        with tabs[2]:
            _walk_through(record)
    view = st.session_state.view
    style = (view, st.session_state.rankdir, graph_theme(), st.session_state.saved)
    # On the page the legend sits under the drawing (the graph gets the width);
    # exported drawings carry it inside, for slides.
    shown = graph_viewer.folded(trace, view)  # layers closed in the viewer: one node each
    dot = draw(shown, *style, False, highlight, done)
    with tabs[0]:
        _graph_tab(shown, source, dot, highlight)
    if tabs[1].open:
        with tabs[1]:
            tensors.tensors_tab(trace)
    if tabs[3].open:
        with tabs[3]:
            _gradient_check(whole, source, whole.backward[-1] if whole.backward else None)
    if tabs[4].open:
        with tabs[4]:
            _export(draw(trace, *style, True))
            graph_viewer.download(
                trace,
                draw(trace, *style, False),
                view,
                style[2],
                lambda d: cached_bytes(d, "svg", 1.0, visitor_key()),
            )
            slides.downloads(trace, st.session_state.rankdir, graph_theme())
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


def _walk_through(record) -> None:
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
        st.markdown(f"**Step {k}:** {code(step.fn.split('::')[-1])} — {escape(rule_for(step.fn))}")
        st.markdown(
            f"upstream: {code(', '.join(step.upstream))} → gradients for inputs: "
            f"{code(', '.join(step.produced) or '(into .grad)')}"
        )
    table(
        [
            {
                "step": s.index + 1,
                "function": s.fn.split("::")[-1],
                "rule": rule_for(s.fn),
                "upstream": ", ".join(s.upstream),
                "gradients out": ", ".join(s.produced),
            }
            for s in steps
        ]
    )


def _graph_tab(trace: Trace, source: str, dot: str | None, highlight: str | None) -> None:
    n_nodes = len(trace.graph.nodes) if trace.graph else 0
    if dot is None:
        st.info("torchviz draws only tensors that autograd tracks; nothing here requires grad yet.")
    elif n_nodes > BIG_GRAPH and st.session_state.get("draw_big") != source:
        st.warning(
            f"This graph has {n_nodes:,} nodes. Laying it out in your browser "
            "can take a while; the tables, the walk-through and export work without it."
        )
        if st.button("Draw it anyway", icon=":material/draw:"):
            st.session_state.draw_big = source
            st.rerun()
    else:
        graph_viewer.toggle()
        view, theme = st.session_state.view, graph_theme()
        refused: list[RenderUnavailable] = []  # the server asked once a run, not again

        def svg_of(d: str) -> bytes:
            try:
                return cached_bytes(d, "svg", 1.0, visitor_key())
            except RenderUnavailable as exc:
                refused.append(exc)
                raise

        if graph_viewer.wanted() and graph_viewer.show(trace, dot, view, theme, svg_of):
            with st.expander("Plain picture (if the viewer does not load)"):
                show_graph(dot)
        else:
            show_graph(dot, refused[0] if refused else None)
        if st.session_state.view == "values":
            _role_legend(graph_theme())
        graph_notes.notes(trace)
        device_panel.legend(trace)
        if highlight:
            st.caption(
                f"Highlighted: step {st.session_state.step} of the backward walk-through (red); grey borders: steps already run."
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


# Beyond this many nodes the browser is not asked to lay a graph out unless the visitor
# says so: a 2,958-node graph froze a Chromium tab for about 180 s.
BROWSER_NODES = 300


def show_graph(dot: str, refused: RenderUnavailable | None = None) -> None:
    """The drawing on the page. With Graphviz installed it is laid out on the server,
    the same SVG that export gives, and shown as an image: that appears about twice as
    fast as laying it out in the browser (docs/BENCHMARKS.md), and an <img> runs no
    script. Without Graphviz, or when the server cannot draw it (`refused`: it said so
    already this run; busy, over a limit, too slow to lay out), Streamlit lays the DOT out
    in the browser, with a warning that says why; a big graph only when the visitor asks."""
    st.session_state.shown_dot = dot
    if dot_available():
        why = refused
        if why is None:
            try:
                svg = cached_bytes(dot, "svg", 1.0, visitor_key())
            except RenderUnavailable as exc:
                why = exc
        if why is None:
            data = base64.b64encode(svg).decode("ascii")
            # Scaled to fit the window (no scroll box of its own): the whole graph, output
            # included, is in view under the page's title.
            st.markdown(
                f'<img alt="{GRAPH_ALT}" style="{GRAPH_STYLE}" '
                f'src="data:image/svg+xml;base64,{data}">',
                unsafe_allow_html=True,
            )
            return
        nodes, _ = graph_size(dot)
        if nodes <= BROWSER_NODES:
            st.warning(f"{message(why)} Drawing it in the browser instead.")
        else:
            st.warning(message(why))
            if not st.checkbox(
                f"Lay out all {nodes:,} nodes in this browser (it can take minutes, "
                "and the tab does not answer meanwhile)",
                key="browser_layout",
                persist_state=KEEP,
            ):
                return
    st.graphviz_chart(dot, width="stretch")


def _role_legend(theme: str) -> None:
    th = THEMES.get(theme, THEMES["light"])
    parts = []
    for role, text in ROLE_TEXT.items():
        border = "dashed" if role == "untracked" else "solid"
        parts.append(
            f'<span style="background:{getattr(th, role)};color:{th.font};border:1px {border} '
            f'{th.border};padding:1px 6px;border-radius:6px;font-size:0.85em">{text}</span>'
        )
    st.markdown("Legend: " + " ".join(parts), unsafe_allow_html=True)


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


def _export(dot: str | None) -> None:
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
        file_name=f"gradviz-graph.{fmt}",
        mime=MIME[fmt],
        icon=":material/download:",
        on_click="ignore",
    )
    st.caption(
        "The same drawing from the command line: `python -m gradviz render PROGRAM.py -o graph.svg`."
    )
