"""`dot -Tsvg` without pango: Graphviz measures label text with its own font metrics.

With its cairo/pango plugin loaded, Graphviz shapes every piece of label text through pango,
harfbuzz and fontconfig to learn its width, and that is most of what `dot -Tsvg` costs on
gradviz's drawings (each tensor's name, shape, values and gradient: perf, docs/BENCHMARKS.md).
An SVG does not need it: the browser draws the text with its own fonts, and the SVG renderer
is Graphviz's core one either way. Without the pango plugin Graphviz estimates widths from
built-in metrics (Helvetica's for our labels, the font Arial and Liberation Sans share), which
match the browser's Helvetica/Arial to within a point; pango's measurements here ran about 12%
wider than the text drawn.

Graphviz reads which plugins to load from a `config6` file in `GVBINDIR`. `svg_environment()`
writes, once per process, a private copy of the installed file listing only the core
(renderers: svg, dot, json) and dot-layout plugins, with absolute paths to the installed
libraries, and returns an environment naming it. Anything unexpected (no config found, a
layout that fails or warns) returns None: `dot` then runs as installed. PNG and PDF need the
cairo plugin and never use this.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sysconfig
import tempfile
import threading
from pathlib import Path

KEEP = ("core", "dot_layout")  # the plugins an SVG layout needs
PROBE = 'digraph { a [shape=Mrecord label="{x|{data|grad}}"]; a -> b [xlabel="e"] }'

_LOCK = threading.Lock()
_STATE: dict[str, str | None] = {}  # dot binary -> the private GVBINDIR, or None


def plugin_dirs(dot_exe: str) -> list[Path]:
    """Where an installed Graphviz keeps its plugins and `config6*`, most likely first:
    beside the `dot` binary's prefix (Debian/Ubuntu multiarch, Homebrew, conda), then the
    usual system folders."""
    prefix = Path(dot_exe).resolve().parent.parent
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    found = [Path(os.environ["GVBINDIR"])] if os.environ.get("GVBINDIR") else []
    for lib in ("lib", "lib64"):
        if multiarch:
            found.append(prefix / lib / multiarch / "graphviz")
        found.append(prefix / lib / "graphviz")
    for base in ("/usr/lib", "/usr/lib64", "/usr/local/lib"):
        if multiarch:
            found.append(Path(base) / multiarch / "graphviz")
        found.append(Path(base) / "graphviz")
        # a Python built without MULTIARCH (some containers) still finds Debian's folder
        found.extend(sorted(Path(base).glob("*-linux-gnu*/graphviz")))
    return list(dict.fromkeys(found))


def config_file(folder: Path) -> Path | None:
    """The plugin configuration `dot -c` wrote in `folder` (`config6`, `config6a`, ...)."""
    if not folder.is_dir():
        return None
    names = sorted(p for p in folder.glob("config[0-9]*") if p.is_file())
    return names[-1] if names else None


def blocks(text: str) -> list[str]:
    """The top-level entries of a plugin configuration: `LIBRARY NAME { ... }`, each whole."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for line in text.splitlines(keepends=True):
        if depth == 0 and not current:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
        current.append(line)
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            out.append("".join(current))
            current, depth = [], 0
    return out


def core_config(text: str, folder: Path) -> str | None:
    """`text` (a plugin configuration read from `folder`) cut to the core and dot-layout
    plugins, their libraries named by absolute path; None when either is missing."""
    kept = {}
    for block in blocks(text):
        words = block.split()
        if len(words) < 3 or words[1] not in KEEP:
            continue
        library = words[0]
        path = Path(library) if os.path.isabs(library) else folder / library
        if not path.exists():
            return None
        kept[words[1]] = block.replace(library, str(path), 1)
    if set(kept) != set(KEEP):
        return None
    return "\n".join(kept[name] for name in KEEP)


def _build(dot_exe: str) -> str | None:
    for folder in plugin_dirs(dot_exe):
        config = config_file(folder)
        if config is None:
            continue
        try:
            text = core_config(config.read_text(encoding="utf-8", errors="replace"), folder)
        except OSError:
            continue
        if text is None:
            return None
        home = tempfile.mkdtemp(prefix="gradviz-graphviz-")  # mode 0700: ours alone
        atexit.register(shutil.rmtree, home, True)
        (Path(home) / config.name).write_text(text, encoding="utf-8")
        try:
            probe = subprocess.run(
                [dot_exe, "-Tsvg"],
                input=PROBE.encode(),
                capture_output=True,
                timeout=10,
                env={**os.environ, "GVBINDIR": home},
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if probe.returncode != 0 or probe.stderr.strip() or b"<svg" not in probe.stdout:
            return None
        return home
    return None


def svg_environment(dot_exe: str) -> dict[str, str] | None:
    """The environment for `dot_exe -Tsvg` without the pango plugin, or None to run `dot`
    as installed. Worked out once per process and `dot` binary."""
    with _LOCK:
        if dot_exe not in _STATE:
            _STATE[dot_exe] = _build(dot_exe)
        home = _STATE[dot_exe]
    return None if home is None else {**os.environ, "GVBINDIR": home}
