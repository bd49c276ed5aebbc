"""The autograd page's session: its first state (a share link's, or the lesson), presets,
the share link it keeps in the address bar, and the drawing's options (`drawing`: the
theme follows the page's unless one is chosen).

Every widget of the page is keyed and kept with persist_state=common.KEEP, so a program, its options
and its results survive a visit to another page of the app."""

from __future__ import annotations

import streamlit as st

from gradviz.graph.model import DrawOptions
from gradviz.program.presets import PRESETS, PRESETS_BY_KEY
from gradviz.program.share import ALL_LEAVES, AUTO, ShareState, from_params, to_params
from gradviz.services import host
from gradviz.services.jobs import JobFailed
from gradviz.ui import device_panel
from gradviz.ui.autograd import graph_viewer

THEME_LABELS = {
    "auto": "follow page",
    "light": "light",
    "dark": "dark",
    "print": "print",
    "lecture": "lecture",
}


def init_state() -> None:
    """First visit: the share link's state if there is one, else the lesson. Either opens on
    the forward graph unless the link says backward ran."""
    if "program" in st.session_state:
        return
    params = st.query_params.to_dict()
    devices, problems = _link_devices(params)
    if problems:  # the link's moves cannot be checked: made nowhere
        params = {k: v for k, v in params.items() if k not in ("move", "to")}
    shared = from_params(params, devices)
    state = st.session_state
    state.share_problems = problems + shared.problems
    state.program = shared.program if shared.program is not None else PRESETS[0].source
    state.submitted = state.program
    state.preset = PRESETS[0].key if shared.program is None else None
    state.view = shared.drawing.view
    state.rankdir = shared.drawing.rankdir
    state.theme = AUTO if shared.theme_follows_page else shared.drawing.theme
    state.saved = shared.drawing.saved
    state.retain = shared.retain
    state.ones = shared.ones
    state.backward_target = shared.backward if shared.program is not None else None
    state.backward_choice = state.backward_target or PRESETS[0].backward
    state.step = shared.step
    if shared.moves and shared.move_to:
        state.move_to = shared.move_to
        state.move_all = shared.moves == (ALL_LEAVES,)
        state.move_leaves = [] if state.move_all else list(shared.moves)


def _link_devices(params: dict[str, str]) -> tuple[list[str] | None, list[str]]:
    """Where this host can move tensors, asked of a worker only for a link that moves some
    (a link's `to` is checked against it); and why not, when the worker could not say."""
    if "move" not in params:
        return None, []
    try:
        return host.facts().device_choices(), []
    except JobFailed as exc:
        return None, [
            f"`to`: could not learn which devices this host offers ({exc}); moving nothing"
        ]


def load_preset() -> None:
    """A preset opens on its forward graph; its output is the one offered for backward."""
    key = st.session_state.get("preset")
    if key in PRESETS_BY_KEY:
        preset = PRESETS_BY_KEY[key]
        st.session_state.program = preset.source
        st.session_state.submitted = preset.source
        st.session_state.backward_target = None
        st.session_state.backward_choice = preset.backward
        st.session_state.ones = False
        st.session_state.step = 0


def graph_theme() -> str:
    """The drawing's theme: the one chosen, or with "auto" the page's own (light or dark)."""
    chosen = st.session_state.get("theme", AUTO)
    if chosen != AUTO:
        return chosen
    return "dark" if st.context.theme.type == "dark" else "light"


def drawing() -> DrawOptions:
    """The drawing's options as the page's controls set them (the theme: graph_theme)."""
    state = st.session_state
    return DrawOptions(
        view=state.view, rankdir=state.rankdir, theme=graph_theme(), saved=state.saved
    )


def share_params(source: str) -> dict[str, str]:
    """Everything that changes the drawing: program, options, backward, moves, the step."""
    state = st.session_state
    moves = device_panel.overrides()
    share = ShareState(
        program=source,
        drawing=drawing(),
        theme_follows_page=state.theme == AUTO,
        backward=state.backward_target,
        ones=state.ones,
        retain=state.retain,
        moves=tuple(name for name, _ in moves),
        move_to=moves[0][1] if moves else None,
        step=state.get("step", 0),
    )
    return to_params(share)


def update_share_link(source: str) -> None:
    params = {**share_params(source), **graph_viewer.share_params()}
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
