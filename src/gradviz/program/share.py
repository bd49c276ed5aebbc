"""Share links: a program and its view options in a URL's query parameters.

The program travels zlib-compressed and base64url-encoded in `p`; options are short
keys, the drawing's (view, dir, theme, saved) read into a DrawOptions (gradviz.graph.model).
Decoding treats every parameter as hostile: sizes are capped before and after
decompression, a value that is not one this host offers (a device it lacks, a flag that is
not 1) falls back to the default, and each problem comes back as a message that names the
field and the default used, never an exception.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from gradviz.graph.model import DEFAULT_DRAWING, RANKDIRS, THEME_NAMES, VIEWS, DrawOptions
from gradviz.program.results.limits import DEFAULT_LIMITS

MAX_PARAM_CHARS = 16_000
AUTO = "auto"  # `theme=auto` (or none): the graph follows the page's theme
THEMES = (AUTO, *THEME_NAMES)
ALL_LEAVES = "*"  # `move=*`: every leaf tensor is moved
MAX_MOVES = 64
MAX_STEP = 100_000
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*")
_DEVICE = re.compile(r"(cpu|mps|cuda(:[0-9]{1,2})?)")
FLAGS = ("ones", "saved", "retain")  # on when "1", off when left out (or "0"); saved: drawing's
QUIZ = "quiz"  # "1": the link opens the viewer in quiz mode (ui/autograd/graph_viewer.py)


@dataclass
class ShareState:
    program: str | None = None
    # view, direction, theme and saved tensors; the other fields stay at their defaults
    drawing: DrawOptions = DEFAULT_DRAWING
    theme_follows_page: bool = True  # `theme=auto`: drawing.theme is the page's, not the link's
    backward: str | None = None
    ones: bool = False
    retain: bool = False
    moves: tuple[str, ...] = ()  # leaf tensors made on move_to, or (ALL_LEAVES,)
    move_to: str | None = None
    step: int = 0  # the backward walk-through's step (0: none highlighted)
    problems: list[str] = field(default_factory=list)


def encode_program(source: str) -> str:
    packed = zlib.compress(source.encode("utf-8"), 9)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def decode_program(text: str, max_chars: int = DEFAULT_LIMITS.max_source_chars) -> str:
    """Inverse of encode_program; raises ValueError with a plain message."""
    if len(text) > MAX_PARAM_CHARS:
        raise ValueError(
            f"the shared program is {len(text):,} characters long; the limit is {MAX_PARAM_CHARS:,}"
        )
    try:
        packed = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(
            "the shared program is not valid base64; the link may be cut short"
        ) from None
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(packed, max_chars * 4 + 1)
    except zlib.error:
        raise ValueError(
            "the shared program is damaged (it does not decompress); the link may be cut short"
        ) from None
    if len(raw) > max_chars * 4 or inflater.unconsumed_tail:
        raise ValueError("the shared program is larger than the program limit")
    if not inflater.eof:
        raise ValueError("the shared program is incomplete; the link may be cut short")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the shared program is not UTF-8 text") from None


def _flags(state: ShareState) -> dict[str, bool]:
    return {"ones": state.ones, "saved": state.drawing.saved, "retain": state.retain}


def to_params(state: ShareState) -> dict[str, str]:
    params = {"p": encode_program(state.program or "")}
    drawing = state.drawing
    if drawing.view != DEFAULT_DRAWING.view:
        params["view"] = drawing.view
    if drawing.rankdir != DEFAULT_DRAWING.rankdir:
        params["dir"] = drawing.rankdir
    if not state.theme_follows_page:
        params["theme"] = drawing.theme
    if state.backward:
        params["backward"] = state.backward
    flags = _flags(state)
    for key in FLAGS:
        if flags[key]:
            params[key] = "1"
    if state.moves and state.move_to:
        params["move"] = ",".join(state.moves)
        params["to"] = state.move_to
    if state.step:
        params["step"] = str(state.step)
    return params


def _choice(params, key: str, choices: tuple[str, ...], default: str, problems: list[str]) -> str:
    value = params.get(key)
    if value is None:
        return default
    if value in choices:
        return value
    problems.append(f"`{key}` must be one of {', '.join(choices)}; using {default}")
    return default


def _flag(params, key: str, problems: list[str]) -> bool:
    value = params.get(key)
    if value is None or value in ("0", "1"):
        return value == "1"
    problems.append(f"`{key}` must be 1 (on) or 0 (off); using off")
    return False


def from_params(params, devices: Sequence[str] | None = None) -> ShareState:
    """A ShareState from a mapping of query parameters (str -> str).

    devices: where this host can move tensors (HostFacts.device_choices()); a link's `to`
    outside them moves nothing, with a message. None: `to` is checked for its form only."""
    state = ShareState()
    problems = state.problems
    if "p" in params:
        try:
            state.program = decode_program(str(params["p"]))
        except ValueError as exc:
            problems.append(f"Could not open the shared program: {exc}.")
    view = _choice(params, "view", VIEWS, DEFAULT_DRAWING.view, problems)
    rankdir = _choice(params, "dir", RANKDIRS, DEFAULT_DRAWING.rankdir, problems)
    theme = _choice(params, "theme", THEMES, AUTO, problems)
    backward = params.get("backward")
    if backward is not None:
        if backward.isidentifier() and len(backward) <= 64:
            state.backward = backward
        else:
            problems.append("`backward` must be a tensor name; ignoring it")
    flags = {key: _flag(params, key, problems) for key in FLAGS}
    state.ones, state.retain = flags["ones"], flags["retain"]
    state.theme_follows_page = theme == AUTO
    state.drawing = DrawOptions(
        view=view,
        rankdir=rankdir,
        theme=DEFAULT_DRAWING.theme if theme == AUTO else theme,
        saved=flags["saved"],
    )
    if params.get(QUIZ) not in (None, "1"):
        problems.append(f"`{QUIZ}` must be 1; opening the viewer without the quiz")
    _moves(params, state, devices)
    step = params.get("step")
    if step is not None:
        if step.isascii() and step.isdigit() and len(step) <= 6 and int(step) <= MAX_STEP:
            state.step = int(step)
        else:
            problems.append("`step` must be a whole number; showing the graph before backward")
    return state


def _moves(params, state: ShareState, devices: Sequence[str] | None) -> None:
    """`move` (leaf names, comma-separated, or *) and `to` (a device), both or neither."""
    move, to = params.get("move"), params.get("to")
    if move is None:
        if to is not None:
            state.problems.append("`to` needs `move` (the tensors to move); moving nothing")
        return
    if to is None or not _DEVICE.fullmatch(to):
        state.problems.append("`to` must be a device such as cpu or cuda:0; moving nothing")
        return
    if devices is not None and to not in devices:
        # `to` matched _DEVICE: a short device name, safe to show.
        offers = ", ".join(devices) or "no device"
        state.problems.append(
            f"`to` is `{to}`, which this host does not offer ({offers}); moving nothing"
        )
        return
    names = tuple(move.split(","))
    named = len(names) <= MAX_MOVES and all(len(n) <= 64 and _NAME.fullmatch(n) for n in names)
    if move == ALL_LEAVES or named:
        state.moves, state.move_to = names, to
    else:
        state.problems.append("`move` must list tensor names separated by commas; moving nothing")
