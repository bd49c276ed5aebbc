"""One injection corpus, and the checks every place that shows program text is held to.

`CORPUS` is text a program, a share link or a message can carry: links and images (also
protocol-relative and javascript:), raw HTML, <autolinks>, bare URLs, www. addresses and
e-mail addresses (which Streamlit's GitHub autolinks turn into links after backslash escapes
are resolved), backticks that close a code span early, LaTeX and Streamlit's colour and
icon codes, XML/DOT/record breakers and a very long text. Every entry names HOST.

`live_markdown` parses Markdown as CommonMark (markdown-it) and then applies the autolink
patterns of Streamlit's Markdown renderer (remark-gfm's, copied from Streamlit's frontend
bundle) to the text nodes, where escapes are already resolved, as that renderer does.
`live_markup` checks HTML or SVG for elements and attributes that load or run something.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

HOST = "evil.example"
CORPUS = {
    "image": f"![t](http://{HOST}/p.png)",
    "image-relative": f"![](//{HOST}/p.png)",
    "link": f"[Session expired - log in again](http://{HOST}/login)",
    "javascript-link": f"[x](javascript:alert('{HOST}'))",
    "html-img": f"<img src=http://{HOST}/h.png onerror=alert(1)>",
    "script": f"<script>fetch('//{HOST}')</script>",
    "autolink": f"<http://{HOST}/auto>",
    "bare-url": f"see http://{HOST}/bare now",
    "www": f"www.{HOST}",
    "email": f"someone@{HOST}",
    "mailto": f"mailto:someone@{HOST}",
    "backticks": f"`` ` ``![b](http://{HOST}/b.png)`",
    "codes": f":red[{HOST}] :material/lock: $x^2$ **{HOST}**",
    "breakers": f']]> " }} {{ | \\ \\N <b>{HOST}</b> -->',
    "long": "x" * 5000 + f" ![l](http://{HOST}/l.png)",
}

_MD = MarkdownIt("commonmark")  # raw HTML on, as Streamlit's sanitised renderer reads it
# remark-gfm's autolink literals (mdast-util-gfm-autolink-literal), matched on text nodes:
# Python's re has no \p{P}, so the e-mail pattern here is looser (it flags more), never less.
_URL = re.compile(r"(?i)(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)")
_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")
# Streamlit's own inline syntax, active outside code spans unless backslash-escaped.
_STREAMLIT = re.compile(r"(?<!\\)(\$|:[a-z]+\[|:material/)")
# The corpus's own tags, written as they are: a match in markup is a live tag.
_PAYLOAD_TAGS = re.compile(rf"<b>{HOST}|<img src=http://{HOST}|<script>fetch\('//{HOST}")
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def live_markdown(text: str) -> list[str]:
    """What in `text` would be a link, an image, raw HTML, an autolink, LaTeX or a Streamlit
    code once rendered (empty: none)."""
    problems = []
    for block in _MD.parse(text):
        if block.type == "html_block":
            problems.append(f"HTML block {block.content[:80]!r}")
        for tok in block.children or []:
            if tok.type in ("link_open", "image"):
                problems.append(f"{tok.type} to {tok.attrGet('href') or tok.attrGet('src')!r}")
            elif tok.type == "html_inline":
                problems.append(f"inline HTML {tok.content[:80]!r}")
            elif tok.type == "text":
                for pattern in (_URL, _EMAIL):
                    problems += [f"autolink {m.group(0)!r}" for m in pattern.finditer(tok.content)]
    outside_code = _CODE_SPAN.sub("", text)
    problems += [f"Streamlit syntax {m.group(0)!r}" for m in _STREAMLIT.finditer(outside_code)]
    return problems


def shown_text(text: str) -> str:
    """What a reader sees of Markdown `text`: its text and code, escapes resolved, without
    the invisible word joiners that break autolinks."""
    out = []
    for block in _MD.parse(text):
        for tok in block.children or []:
            if tok.type in ("text", "code_inline", "html_inline"):
                out.append(tok.content)
            elif tok.type in ("softbreak", "hardbreak"):
                out.append(" ")
    return "".join(out).replace("\u2060", "")


class _Markup(HTMLParser):
    LOADS = {"img", "image", "script", "iframe", "object", "embed", "link", "meta", "base"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if name in ("href", "xlink:href", "src", "action") and (
                HOST in value or value.strip().lower().startswith("javascript:")
            ):
                self.problems.append(f"<{tag} {name}={value[:80]!r}>")
        if tag in self.LOADS and any(HOST in (v or "") for _, v in attrs):
            self.problems.append(f"<{tag}> naming {HOST}")


def live_markup(text: str) -> list[str]:
    """Elements and attributes in HTML or SVG `text` that load from HOST or run script."""
    parser = _Markup()
    parser.feed(text)
    parser.close()
    parser.problems += [f"the program's tag {m.group(0)!r}" for m in _PAYLOAD_TAGS.finditer(text)]
    return parser.problems
