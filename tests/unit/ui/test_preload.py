"""gradviz.ui.preload: which of Streamlit's scripts the viewer's component needs beyond those the
page loads at its start, and the script that asks the browser for them early."""

from __future__ import annotations

import json
import re

from gradviz.ui import preload


def _static(tmp_path, files: dict[str, str], bundle="index.AAA.js", preloaded=("shared.S.js",)):
    """A Streamlit-like static tree: index.html loading `bundle` and naming the modules it
    imports (`preloaded`) as modulepreload links, as Streamlit's build writes it; static/js/."""
    js = tmp_path / "static" / "js"
    js.mkdir(parents=True)
    links = "".join(
        f'<link rel="modulepreload" crossorigin href="./static/js/{n}">\n' for n in preloaded
    )
    (tmp_path / "index.html").write_text(
        f'<script type="module" crossorigin src="./static/js/{bundle}"></script>\n{links}'
    )
    for name, text in files.items():
        (js / name).write_text(text)
    return js


def test_the_chunk_and_what_it_imports_less_what_the_bundle_loaded(tmp_path):
    js = _static(
        tmp_path,
        {
            "index.AAA.js": 'import{a as b}from"./shared.S.js";',
            "shared.S.js": "export const a=1",
            "BidiComponent.H1.js": 'import{a}from"./shared.S.js";import{t}from"./ser.D.js";',
            "ser.D.js": 'import{r}from"./batch.E.js";import{a}from"./shared.S.js";',
            "batch.E.js": 'import{x}from"./missing.M.js";export const r=2',
            "Selectbox.Q.js": "",  # another element's chunk: not the viewer's
        },
    )
    assert preload.component_scripts(js) == ("BidiComponent.H1.js", "ser.D.js", "batch.E.js")


def test_nothing_when_the_files_are_not_as_expected(tmp_path):
    # no component chunk
    assert preload.component_scripts(_static(tmp_path / "a", {"index.AAA.js": ""})) == ()
    # two of them (which one the frontend asks for is unknown)
    two = {"index.AAA.js": "", "BidiComponent.X.js": "", "BidiComponent.Y.js": ""}
    assert preload.component_scripts(_static(tmp_path / "b", two)) == ()
    # no page to read the bundle's name from
    js = tmp_path / "c" / "static" / "js"
    js.mkdir(parents=True)
    (js / "BidiComponent.X.js").write_text("")
    assert preload.component_scripts(js) == ()
    # more modules than a build has: its format changed, preload nothing
    many = {"index.AAA.js": ""}
    many["BidiComponent.X.js"] = "".join(f'import"./m{i}.js";' for i in range(250))
    many.update({f"m{i}.js": "" for i in range(250)})
    assert preload.component_scripts(_static(tmp_path / "d", many)) == ()


def test_the_installed_streamlit_has_the_chunk_and_it_is_not_in_the_bundle():
    names = preload.component_scripts()
    assert names, "Streamlit's component chunk was not found: the viewer's scripts load late"
    assert re.fullmatch(r"BidiComponent\.[\w\-]+\.js", names[0])
    assert all((preload.STATIC_JS / n).is_file() for n in names)
    assert not any(n.startswith("index.") for n in names)  # the bundle is loaded already
    page = (preload.STATIC_JS.parent.parent / "index.html").read_text(encoding="utf-8")
    assert not any(f'href="./static/js/{n}"' in page for n in names)  # so are its modules


def test_the_script_names_only_plain_file_names():
    script = preload.preload_script(("BidiComponent.H1.js", 'x".js', "../up.js", "ser.D.js"))
    names = json.loads(re.search(r"const names = (\[.*?\]);", script).group(1))
    assert names == ["./BidiComponent.H1.js", "./ser.D.js"]
    assert script.startswith("<script>") and script.endswith("</script>")
    assert 'rel = "modulepreload"' in script
    assert preload.preload_script(()) == ""
    assert preload.preload_script(('bad".js',)) == ""
