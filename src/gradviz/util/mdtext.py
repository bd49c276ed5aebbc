"""User text made safe for Markdown: what a program, a share link or a file name says shows
as typed, never as a link, an image, HTML, LaTeX or a Streamlit colour or icon code.

Streamlit renders every message (st.error, st.info, st.caption, st.markdown, ...) as
Markdown with GitHub's autolinks, so text from a visitor that reaches one unescaped can make
the next visitor's browser fetch an image from anywhere or show a link inside the app's own
error box. Every piece of text that did not come from gradviz itself goes through this
module: `code` (program text, shown as a code span), `escape` (plain text), `message`
(gradviz's own messages that quote user text in `code spans`), `escape_all` (table cells)
or `html_text` (HTML), and for Graphviz `dot_string` (a DOT string).

Backslash escapes are not enough against autolinks: Streamlit's GitHub autolinking runs on
the text after escapes are resolved, so `http\\://host`, `www\\.host` and `a\\@b.org`
still became links. `escape` and `escape_all` put a WORD JOINER (U+2060, invisible) inside
`://`, after `www` and after `@`, which the autolink patterns do not match; code spans are
never autolinked. No Streamlit here.
"""

from __future__ import annotations

import html as _html
import re
import string

# The characters that make Markdown active: links and images ([ ] !), raw HTML and
# <autolinks> (< >), bare autolinks (http: mailto: user@host), Streamlit codes (:red[ :icon:),
# math ($), code (`), emphasis (* _ ~), tables (|), headings (#) and the escape itself (\).
# Other punctuation ( ) , . - ' " shows as typed without it, so plain sentences stay plain.
UNSAFE = "\\`*_[]<>!|~$:@#"
_LINE_BREAKS = dict.fromkeys("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " ")  # str.splitlines'
_TRANSLATE_LINE_BREAKS = str.maketrans(_LINE_BREAKS)
_TRANSLATE = str.maketrans({**{c: "\\" + c for c in UNSAFE}, **_LINE_BREAKS})
# Tables escape every ASCII punctuation character (CommonMark allows it): a cell shows as
# typed and parses back (tests/markdown_tables.py), whatever it holds.
_TRANSLATE_ALL = str.maketrans({**{c: "\\" + c for c in string.punctuation}, **_LINE_BREAKS})
JOINER = "\u2060"  # WORD JOINER: invisible, and breaks the autolink patterns it sits in
# What GitHub autolinks with no angle brackets: scheme://, www. and user@host (and mailto:).
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=/)|(?<=www)(?=\.)|(?<=@)")
# An underscore inside a word (state_dict) never opens or closes emphasis in CommonMark.
_INTRAWORD_UNDERSCORE = re.compile(r"(?<=[^\W_])\\_(?=[^\W_])")
_CODE_SPAN_LIMIT = 200  # longer quoted text is escaped, not set as code


def escape(text: object) -> str:
    """`text` as Markdown that shows exactly these characters, on one line."""
    unlinked = _AUTOLINK.sub(JOINER, str(text))
    return _INTRAWORD_UNDERSCORE.sub("_", unlinked.translate(_TRANSLATE))


def escape_all(text: object) -> str:
    """`text` with every ASCII punctuation character escaped, on one line (table cells)."""
    return _AUTOLINK.sub(JOINER, str(text)).translate(_TRANSLATE_ALL)


def code(text: object) -> str:
    """`text` as one inline code span: shown exactly as typed (on one line), never a link,
    an image, HTML, LaTeX or a Streamlit code, whatever backticks it holds.

    The fence is one backtick longer than the longest run of backticks in the text, and a
    space pads text that starts or ends with a backtick (CommonMark strips one such space).
    Empty text is an empty string (an empty code span is not one)."""
    text = str(text).translate(_TRANSLATE_LINE_BREAKS)
    if not text:
        return ""
    runs = re.findall(r"`+", text)
    fence = "`" * (max(map(len, runs), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def html_text(text: object) -> str:
    """`text` as HTML text or a quoted attribute value: shows as typed, opens no tag."""
    return _html.escape(str(text), quote=True)


def dot_string(text: object) -> str:
    """`text` as a DOT double-quoted string (a label, a tooltip: Graphviz writes it into
    the SVG as XML text, escaped): no quote ends it early and no backslash is an escape."""
    text = str(text)
    if "\\" not in text and '"' not in text and "\n" not in text:  # most: nothing to escape
        return '"' + text + '"'
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def message(text: object) -> str:
    """A message whose `backticked` parts are code spans and whose other parts are escaped.

    Code spans render their content literally, and a span cannot hold a backtick, so user text
    quoted between backticks stays inert. An odd number of backticks (user text that adds one)
    or a span across lines makes the whole message plain escaped text.
    """
    text = str(text)
    parts = text.split("`")
    if len(parts) % 2 == 0 or any(
        not p.strip() or len(p) > _CODE_SPAN_LIMIT or any(c in _LINE_BREAKS for c in p)
        for p in parts[1::2]
    ):
        return escape(text)
    return "".join(escape(p) if i % 2 == 0 else f"`{p}`" for i, p in enumerate(parts))
