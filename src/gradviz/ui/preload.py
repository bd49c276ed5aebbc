"""The landing graph's viewer without waiting in line for its scripts.

The Autograd page draws its interactive viewer with a Streamlit component (st.components.v2,
gradviz.ui.autograd.graph_viewer). Streamlit's frontend fetches the script that draws components
(`static/js/BidiComponent.<hash>.js` and the modules it imports, about 200 KB) only when the
viewer's element arrives, and by then it has asked for about thirty other element scripts
(the editor's select box, text area, radios, ...) from the same busy server process, six at
a time: on a cold load the viewer's script waited about 0.25 s in that line (docs/
BENCHMARKS.md, "Cold start after the viewer's message"; the gain measured end to end is
smaller: about 0.1 s on loopback, 0.24 s at 40 ms of latency, medians of pairs).

`preload_script()` gives a small script for the page's first element (the sidebar's, which
runs gradviz's own JavaScript already): it adds `<link rel="modulepreload">` for those files,
so the browser fetches them while the server is still running the page. The names are read
from the installed Streamlit's own files (they change with each release); where they cannot
be found, nothing is preloaded and the page works as before. Only these files, served by the
same server, are named: no visitor text reaches the script.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import streamlit

STATIC_JS = Path(streamlit.__file__).resolve().parent / "static" / "static" / "js"
COMPONENT = "BidiComponent"  # Streamlit's chunk for st.components.v2's elements
# `import{a as b}from"./name.hash.js"` and `import"./name.hash.js"` in the built chunk
IMPORT = re.compile(r'(?:\bfrom|\bimport)\s*"\./([\w.\-]+\.js)"')
MAX_FILES = 40  # the chunk and the modules it adds: a few; more means the build changed


def _imports(js_dir: Path, name: str) -> list[str]:
    """The modules `name` imports statically (file names in `js_dir`)."""
    try:
        text = (js_dir / name).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [n for n in IMPORT.findall(text) if (js_dir / n).is_file()]


def _closure(js_dir: Path, first: list[str], skip: set[str]) -> list[str] | None:
    """`first` and everything they import, directly or through each other, less `skip`, in
    the order met; None past MAX_FILES."""
    names = [n for n in first if n not in skip]
    for name in names:  # the list grows as it is read
        for imported in _imports(js_dir, name):
            if imported not in names and imported not in skip:
                names.append(imported)
        if len(names) > MAX_FILES:
            return None
    return names


@functools.cache
def component_scripts(js_dir: Path = STATIC_JS) -> tuple[str, ...]:
    """The component chunk's file name and those of the modules it needs that the page has
    not loaded at its start, in that order; () when there is not exactly one such chunk or
    one bundle, or when they are more than MAX_FILES. What the page loads at its start is
    what Streamlit's index.html names: its bundle and the bundle's modules (each a
    `<link rel="modulepreload">`), so only the chunk's few files are read here."""
    chunk = sorted(js_dir.glob(f"{COMPONENT}.*.js"))
    try:
        page = (js_dir.parent.parent / "index.html").read_text(encoding="utf-8")
    except OSError:
        return ()
    bundle = re.findall(r'<script[^>]*type="module"[^>]*src="\./static/js/([\w.\-]+\.js)"', page)
    if len(chunk) != 1 or len(bundle) != 1:
        return ()
    loaded = set(bundle) | set(
        re.findall(r'rel="modulepreload"[^>]*href="\./static/js/([\w.\-]+\.js)"', page)
    )
    needed = _closure(js_dir, [chunk[0].name], loaded)
    return tuple(needed) if needed else ()


# Resolved against the URL of Streamlit's own bundle (`<script type="module"
# src="./static/js/index.<hash>.js">`), so a base URL path or a page's URL path changes
# nothing: the frontend's later import of the same file then finds it fetched.
_TEMPLATE = """<script>(() => {
  const names = NAMES;
  const main = document.querySelector('script[type="module"][src*="/static/js/"]');
  if (!main || !names.length) return;
  for (const name of names) {
    const href = new URL(name, main.src).href;
    // (on a warm server the frontend can ask for them first: its own links are there)
    if (document.querySelector('link[rel="modulepreload"][href="' + href + '"]')) continue;
    const link = document.createElement("link");
    link.rel = "modulepreload";
    link.crossOrigin = "";
    link.dataset.gvPreload = "1";
    link.href = href;
    document.head.appendChild(link);
  }
  document.documentElement.dataset.gvPreloaded = String(names.length);
})();</script>"""


def preload_script(names: tuple[str, ...] | None = None) -> str:
    """A <script> that preloads `names` (default: component_scripts()); "" for none."""
    names = component_scripts() if names is None else names
    safe = [n for n in names if re.fullmatch(r"[\w.\-]+\.js", n)]
    if not safe:
        return ""
    return _TEMPLATE.replace("NAMES", json.dumps(["./" + n for n in safe]))
