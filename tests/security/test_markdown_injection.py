"""Share links cannot put links, images, HTML or Streamlit codes into the page's messages.

Streamlit renders st.error, st.warning, st.info, st.caption and st.markdown as Markdown with
GitHub's autolinks: a program's string that reached a message unescaped made the next
visitor's browser fetch an attacker's image and showed a phishing link in the error box.
These tests open such links through AppTest and read the Markdown each message carries; the
browser test (tests/e2e/test_markdown_browser.py) checks what Chromium renders.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradviz.program.share import encode_program
from gradviz.ui.autograd import TAB_KEY, TABS
from gradviz.util import mdtext

APP = str(Path(__file__).resolve().parents[2] / "app.py")
EVIL = "http://attacker.invalid"
IMAGE = f"![t]({EVIL}/p.png)"
LINK = f"[Session expired - log in again]({EVIL}/login)"
HTML = f"<img src={EVIL}/h.png> <a href={EVIL}>x</a>"
AUTOLINK = f"<{EVIL}/auto> {EVIL}/bare www.attacker.invalid"
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
# Streamlit colour/icon code or LaTeX. Escaped forms (\[, \<, http\:, \$) are inert.
ACTIVE = [
    re.compile(r"(?<!\\)\]\((?!\\)"),  # ](  -> link or image
    re.compile(r"(?<!\\)<(?:img|a|http)"),  # raw HTML or <autolink>
    re.compile(r"https?://"),  # a bare autolink (escaped: http\:\/\/)
    re.compile(r"(?<!\\)www\.attacker"),
    re.compile(r"(?<!\\):red\["),
    re.compile(r"(?<!\\)\$x"),
]


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
    return [t for t in texts if "attacker" in t and any(p.search(t) for p in ACTIVE)]


@pytest.mark.parametrize("program", list(PROGRAMS.values()), ids=list(PROGRAMS))
def test_program_strings_reach_messages_escaped(program):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["p"] = encode_program(program)
    at.run()
    assert not at.exception, at.exception
    texts = _markdown_of_every_tab(at)
    assert any("attacker" in t for t in texts), f"the payload never reached a message: {texts}"
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
    assert re.sub(r"\\(.)", r"\1", out) == PAYLOAD


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
