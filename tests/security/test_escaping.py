"""mdtext's escaping functions against the injection corpus (tests/security/injection.py):
each shows every character of the text and makes none of it a link, an image, HTML, an
autolink, LaTeX or a Streamlit code. The page, the exports and the browser are checked with
the same corpus in test_markdown_injection.py, test_export_injection.py and
tests/e2e/test_injection_browser.py."""

from __future__ import annotations

import html

import pytest

from gradviz.util import mdtable, mdtext
from tests import markdown_tables
from tests.security.injection import CORPUS, HOST, live_markdown, live_markup, shown_text

ONE_LINE = {k: v.replace("\n", " ") for k, v in CORPUS.items()}


@pytest.mark.parametrize("text", CORPUS.values(), ids=CORPUS)
def test_code_shows_the_text_as_one_inert_code_span(text):
    out = mdtext.code(text)
    assert not live_markdown(out), live_markdown(out)
    assert shown_text(out) == text
    assert shown_text(f"before {out} after") == f"before {text} after"


@pytest.mark.parametrize("text", CORPUS.values(), ids=CORPUS)
def test_escape_shows_the_text_and_makes_no_link(text):
    out = mdtext.escape(text)
    assert not live_markdown(out), live_markdown(out)
    assert shown_text(out) == text


@pytest.mark.parametrize("text", CORPUS.values(), ids=CORPUS)
def test_message_quoting_program_text_makes_no_link(text):
    for quoted in (f"bad value `{text}` for p", f"`{text}`` `{text}", text):
        out = mdtext.message(quoted)
        assert not live_markdown(out), (quoted, live_markdown(out))
        assert HOST in shown_text(out)


@pytest.mark.parametrize("text", CORPUS.values(), ids=CORPUS)
def test_table_cells_make_no_link_and_parse_back(text):
    out = mdtable.to_markdown([{"parameter": text, "norm": 1.0}])
    assert not live_markdown(out), live_markdown(out)
    assert markdown_tables.parse(out) == [{"parameter": text, "norm": "1"}]


@pytest.mark.parametrize("text", CORPUS.values(), ids=CORPUS)
def test_html_text_makes_no_tag(text):
    out = f'<span title="{mdtext.html_text(text)}">{mdtext.html_text(text)}</span>'
    assert not live_markup(out), live_markup(out)
    assert html.unescape(out.split(">", 1)[1].rsplit("<", 1)[0]) == text


def test_code_fences_longer_than_any_backtick_run():
    assert mdtext.code("a") == "`a`"
    assert mdtext.code("a``b") == "```a``b```"
    assert mdtext.code("`x`") == "`` `x` ``"
    assert mdtext.code("") == ""
    assert mdtext.code("two\n\nparagraphs") == "`two  paragraphs`"  # no paragraph break
