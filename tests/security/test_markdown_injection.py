"""Share links cannot put links, images, HTML or Streamlit codes into the page's messages.

Streamlit renders st.error, st.warning, st.info, st.caption and st.markdown as Markdown with
GitHub's autolinks: a program's string that reached a message unescaped made the next
visitor's browser fetch an attacker's image and showed a phishing link in the error box, and
a bare URL, www. address or e-mail address in a message became a link even when escaped.
These tests open such links through AppTest and check the Markdown each message carries
with tests/security/injection.py; the browser test (tests/e2e/test_injection_browser.py)
checks what Chromium renders.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradviz.graph.collapse import fold_calls
from gradviz.graph.model import GraphModel, GraphNode, ModuleCall
from gradviz.program.share import encode_program
from gradviz.ui.autograd.tabs import TAB_KEY, TABS
from gradviz.util import mdtext
from tests.security.injection import HOST, live_markdown, shown_text

APP = str(Path(__file__).resolve().parents[2] / "app.py")
EVIL = f"http://{HOST}"
IMAGE = f"![t]({EVIL}/p.png)"
LINK = f"[Session expired - log in again]({EVIL}/login)"
HTML = f"<img src={EVIL}/h.png> <a href={EVIL}>x</a>"
AUTOLINK = f"<{EVIL}/auto> {EVIL}/bare www.{HOST} mail@{HOST}"
CODES = ":red[alert] :material/lock: $x^2$ **bold**"
PAYLOAD = f"{IMAGE} {LINK} {HTML} {AUTOLINK} {CODES}"
# Program strings are at most 200 characters: two payloads cover every form.
PAYLOADS = {"image-link-codes": f"{IMAGE} {LINK} {CODES}", "html-autolinks": f"{HTML} {AUTOLINK}"}
SITES = {
    "norm-p": "x = torch.ones(3, requires_grad=True)\ny = torch.norm(x, p={})",
    "device": "x = torch.ones(2, device={})",
    "to-device": "x = torch.ones(2)\ny = x.to({})",
    "backticks": "x = torch.ones(3)\ny = torch.norm(x, p={})",
}
PROGRAMS = {
    f"{site}-{kind}": template.format(repr(f"`{payload}`` `" if site == "backticks" else payload))
    for site, template in SITES.items()
    for kind, payload in PAYLOADS.items()
}
PARAMS = {
    "view": {"p": encode_program("x = torch.ones(2)"), "view": PAYLOAD},
    "theme": {"p": encode_program("x = torch.ones(2)"), "theme": PAYLOAD},
    "backward": {"p": encode_program("x = torch.ones(2)"), "backward": PAYLOAD},
}

# Markdown that would become active: an image or link opener, raw HTML, an autolink, a
# Streamlit colour/icon code or LaTeX. Escaped forms (\[, \<, \$) are inert.
ACTIVE = [
    re.compile(r"(?<!\\)\]\((?!\\)"),  # ](  -> link or image
    re.compile(r"(?<!\\)<(?:img|a|http)"),  # raw HTML or <autolink>
    re.compile(r"(?<!\\):red\["),
    re.compile(r"(?<!\\)\$x"),
]
# Dictionary keys reach the page as program text: a device error's operands and fix, the
# output a program ran backward on, an optimizer's name. Each at most 26 characters, as
# operands are quoted up to 40 and an optimizer up to 30.
KEYS = {
    "image": f"`![](//{HOST}/x)`",
    "html": f"`<img src=//{HOST}>`",
    "autolinks": f"{EVIL} a@{HOST}",
}
KEYED = {
    "device-fix": (
        "a = torch.ones(2)\nd = {{{k}: torch.ones(2)}}\ny = a + d[{k}]\n",
        {"move": "a", "to": "cuda:0"},
    ),
    "ran-backward": (
        "d = {{{k}: torch.ones(2, requires_grad=True)}}\nd[{k}].sum().backward()\n",
        {"step": "1"},
    ),
    "optimizer": (
        "w = torch.ones(2, requires_grad=True)\no = {{{k}: torch.optim.SGD([w], lr=0.1)}}\n"
        "for i in range(2):\n    w.sum().backward()\n    o[{k}].step()\n",
        {},
    ),
}


def _markdown_of(at: AppTest) -> list[str]:
    """The Markdown body of every message and caption on the page."""
    out = []
    for kind in ("error", "warning", "info", "success", "caption", "markdown"):
        out.extend(str(e.value) for e in getattr(at, kind))
    return out


def _markdown_of_every_tab(at: AppTest) -> list[str]:
    """_markdown_of with each of the autograd page's tabs open in turn (the tabs beside the
    graph are made only while open)."""
    out = _markdown_of(at)
    for label in TABS[1:]:
        at.session_state[TAB_KEY] = label
        at.run()
        assert not at.exception, at.exception
        out.extend(_markdown_of(at))
    return out


def _active(texts: list[str]) -> list[str]:
    """The texts naming HOST that would render a link, image, HTML, autolink or code."""
    return [(t, live_markdown(t)) for t in texts if HOST in t and live_markdown(t)]


@pytest.mark.parametrize("program", list(PROGRAMS.values()), ids=list(PROGRAMS))
def test_program_strings_reach_messages_escaped(program):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["p"] = encode_program(program)
    at.run()
    assert not at.exception, at.exception
    texts = _markdown_of_every_tab(at)
    assert any(HOST in t for t in texts), f"the payload never reached a message: {texts}"
    assert not _active(texts), _active(texts)


@pytest.mark.parametrize("params", list(PARAMS.values()), ids=list(PARAMS))
def test_share_link_parameters_reach_messages_escaped(params):
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    texts = _markdown_of_every_tab(at)
    assert not _active(texts), _active(texts)


def test_escape_keeps_every_character_and_activates_none():
    out = mdtext.escape(PAYLOAD)
    assert not any(p.search(out) for p in ACTIVE), out
    assert not live_markdown(out), live_markdown(out)
    assert shown_text(out) == PAYLOAD


@pytest.mark.parametrize(
    ("site", "key"),
    [(site, key) for site in KEYED for key in KEYS if site != "optimizer" or key == "image"],
)
def test_program_text_reaches_the_page_as_text(site, key):
    """Where a dictionary key is program text on the page (the device error's operands and
    "Fix", "The program itself ran backward", the walk-through and its slides, an
    optimizer's steps), it shows whole and inert."""
    template, params = KEYED[site]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["p"] = encode_program(template.format(k=repr(KEYS[key])))
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    texts = _markdown_of_every_tab(at)
    shown = [shown_text(t) for t in texts]
    assert any(KEYS[key] in t for t in shown), f"the key never reached the page whole: {texts}"
    assert not _active(texts), _active(texts)
    if site == "device-fix":
        k = repr(KEYS[key])
        assert any(f"Fix: d[{k}] = d[{k}].to(a.device)" in t for t in shown), shown


def _clicked(title: str) -> None:
    import streamlit as st

    from gradviz.ui.autograd import graph_viewer

    st.session_state[graph_viewer.SELECTED] = {"title": title, "line": 1, "text": "x = 1"}
    graph_viewer.marked_program("x = 1")


@pytest.mark.parametrize("key", list(KEYS.values()), ids=list(KEYS))
def test_folded_layer_title_clicked_in_the_viewer_shows_as_text(key):
    """A layer reached through a dictionary (`m[key](x)`) is titled with that text when
    folded; clicking it in the viewer names it above the program."""
    model = GraphModel(
        nodes=[GraphNode("n1", "function", "AddBackward0", "function", module="m0")],
        modules=[ModuleCall("m0", f"m[{key!r}]", "Linear", 1)],
    )
    title = fold_calls(model, ["m0"]).node("fold_m0").title
    at = AppTest.from_function(_clicked, args=(title,), default_timeout=60).run()
    assert not at.exception, at.exception
    texts = _markdown_of(at)
    assert any(title.replace("\n", " ") in shown_text(t) for t in texts), texts
    assert not _active(texts), _active(texts)


@pytest.mark.parametrize(
    "text",
    [
        "name `x` is not defined",
        f"bad value `{IMAGE}` for p",
        f"odd ` {LINK}",
        f"span across `lines\n{LINK}`",
        f"`{LINK}`` `{IMAGE}`",
    ],
)
def test_message_sets_quoted_text_in_code_or_escapes_it(text):
    out = mdtext.message(text)
    outside_code = re.sub(r"`[^`]*`", "", out)
    assert not any(p.search(outside_code) for p in ACTIVE), out
    assert "\n" not in out


def test_message_keeps_code_spans_of_plain_messages():
    assert mdtext.message("name `x` is not defined") == "name `x` is not defined"
