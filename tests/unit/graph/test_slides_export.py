"""Slides (16:9): `python -m gradviz render --slide` and gradviz.graph.slides.

Text is measured on the SVG as a browser shows it at 1920x1080: each text element's
font-size, times every scale() around it, times the viewBox's scale to the SVG's size."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradviz.cli.main import main
from gradviz.graph import render
from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.results.trace import RunOptions

needs_dot = pytest.mark.skipif(not render.dot_available(), reason="Graphviz `dot` not installed")
PRESETS = ("lesson", "tutorial_net")
MIN_PX = 18.0
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    monkeypatch.setenv("GRADVIZ_SANDBOX", "off")


def _px(length: str) -> float:
    number = float(re.match(r"[0-9.]+", length).group(0))
    return number * 4 / 3 if length.endswith("pt") else number


def _scale(transform: str | None) -> float:
    out = 1.0
    for m in re.finditer(r"scale\(\s*([-0-9.]+)(?:[\s,]+([-0-9.]+))?\s*\)", transform or ""):
        sx = abs(float(m.group(1)))
        sy = abs(float(m.group(2))) if m.group(2) else sx
        out *= min(sx, sy)
    return out


def svg_texts(svg: bytes) -> list[tuple[float, str, float, str]]:
    """(effective font size in px, text, y in the drawing, class of the enclosing group) of
    every text element, the SVG shown at its own width and height."""
    root = ET.fromstring(svg)
    _, _, vb_w, vb_h = (float(v) for v in root.get("viewBox").split())
    view = min(_px(root.get("width")) / vb_w, _px(root.get("height")) / vb_h)
    out = []

    def walk(el, scale: float, group: str) -> None:
        scale *= _scale(el.get("transform"))
        if el.tag == SVG + "g" and el.get("class"):
            group = el.get("class")
        if el.tag == SVG + "text":
            size = float(el.get("font-size"))
            out.append((size * scale * view, el.text or "", float(el.get("y", 0)), group))
        for child in el:
            walk(child, scale, group)

    walk(root, 1.0, "")
    return out


def smallest_text_px(svg: bytes) -> float:
    return min(size for size, *_ in svg_texts(svg))


def _program(tmp_path: Path, key: str) -> tuple[Path, list[str]]:
    preset = PRESETS_BY_KEY[key]
    path = tmp_path / f"{key}.py"
    path.write_text(preset.source, encoding="utf-8")
    return path, ["--backward", preset.backward] if preset.backward else []


def _slides(tmp_path: Path, key: str, fmt: str, *extra: str) -> list[Path]:
    program, backward = _program(tmp_path, key)
    out = tmp_path / f"{key}-out.{fmt}"
    assert main(["render", "--slide", *extra, *backward, "-o", str(out), str(program)]) == 0
    return [out] if out.exists() else sorted(tmp_path.glob(f"{key}-out-*.{fmt}"))


@needs_dot
@pytest.mark.parametrize("key", PRESETS)
def test_slide_svg_is_1920x1080_with_text_at_least_18_px(tmp_path, key):
    files = _slides(tmp_path, key, "svg")
    assert files
    for path in files:
        svg = path.read_bytes()
        root = ET.fromstring(svg)
        assert (root.get("width"), root.get("height")) == ("1920px", "1080px")
        _, _, w, h = (float(v) for v in root.get("viewBox").split())
        assert w / h == pytest.approx(16 / 9, rel=1e-3)
        assert smallest_text_px(svg) >= MIN_PX, path.name


@needs_dot
@pytest.mark.parametrize("key", PRESETS)
def test_slide_png_is_exactly_1920x1080(tmp_path, key):
    from PIL import Image

    files = _slides(tmp_path, key, "png")
    assert files
    for path in files:
        with Image.open(path) as im:
            assert im.size == (1920, 1080)


@needs_dot
@pytest.mark.parametrize("key", PRESETS)
def test_slide_pdf_pages_are_16_by_9(tmp_path, key):
    from pypdf import PdfReader

    (path,) = _slides(tmp_path, key, "pdf")
    pages = PdfReader(io.BytesIO(path.read_bytes())).pages
    assert len(pages) >= 1
    for page in pages:
        w, h = float(page.mediabox.width), float(page.mediabox.height)
        assert (w, h) == pytest.approx((960, 540), abs=1)  # 13.333 x 7.5 inches


@needs_dot
def test_slide_keeps_the_whole_label_and_puts_the_legend_below(tmp_path):
    (path,) = _slides(tmp_path, "lesson", "svg")
    texts = svg_texts(path.read_bytes())
    joined = "".join(t for _, t, _, _ in texts).replace(" ", "")
    assert "x=torch.arange(1,4,dtype=torch.float32,requires_grad=True)" in joined
    assert not any("float32,…" in t for _, t, _, _ in texts)
    legend = [y for _, t, y, _ in texts if "intermediate tensor" in t]
    nodes = [y for _, _, y, group in texts if group == "node"]
    assert legend and nodes and min(legend) > max(nodes)  # below every node


@needs_dot
def test_slide_without_legend(tmp_path):
    (path,) = _slides(tmp_path, "lesson", "svg", "--no-legend")
    svg = path.read_bytes()
    assert not [t for _, t, _, _ in svg_texts(svg) if "intermediate tensor" in t]
    assert smallest_text_px(svg) >= MIN_PX


def test_slide_file_is_named_after_the_output():
    from gradviz.graph.slides.export import file_stem

    trace = run_program(PRESETS_BY_KEY["tutorial_net"].source, RunOptions())
    assert file_stem(trace.graph) == "loss-graph-slide"
    assert file_stem(None) == "gradviz-graph-slide"


def test_slide_refuses_other_formats(tmp_path, capsys):
    program, _ = _program(tmp_path, "lesson")
    assert main(["render", "--slide", "-o", str(tmp_path / "x.dot"), str(program)]) == 2
    assert "--slide writes" in capsys.readouterr().err


@needs_dot
def test_a_graph_too_long_for_one_slide_is_split_over_numbered_slides(tmp_path):
    lines = ["h = torch.ones(2, requires_grad=True)", *["h = h * 1.01"] * 40, "y = h.sum()"]
    program = tmp_path / "chain.py"
    program.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "chain.svg"
    assert main(["render", "--slide", "-o", str(out), str(program)]) == 0
    files = sorted(tmp_path.glob("chain-*.svg"))
    assert len(files) >= 2 and not out.exists()
    for path in files:
        assert smallest_text_px(path.read_bytes()) >= MIN_PX, path.name


def test_wrapped_keeps_every_character():
    from gradviz.graph.dot import wrapped

    text = "x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)"
    lines = wrapped(text, 20)
    assert len(lines) > 1 and all(len(line) <= 22 for line in lines)
    assert " ".join(lines).replace(" ", "") == text.replace(" ", "")


@needs_dot
def test_a_split_graph_s_slides_say_where_each_cut_arrow_goes_on():
    from gradviz.graph.slides import layout

    lines = ["h = torch.ones(2, requires_grad=True)", *["h = h * 1.01"] * 40, "y = h.sum()"]
    trace = run_program("\n".join(lines) + "\n", RunOptions())
    deck = layout.plan(trace.graph, "svg")
    n = len(deck.slides)
    assert n >= 2
    for i, slide in enumerate(deck.slides, 1):
        svg = render.render_bytes(slide.dot, "svg").decode("utf-8")
        onward = f"→ continues on slide {i + 1}"
        back = f"continued from slide {i - 1} →"
        assert (onward in svg) == (i < n), (i, n)
        assert (back in svg) == (i > 1), (i, n)
        assert not re.search(rf"slide {i}\b", svg)  # never itself


@needs_dot
def test_the_tutorial_net_is_one_png_slide_its_inputs_dashed_without_a_label(tmp_path):
    # its inputs' arrows into the folded Net and the loss are dashed (no gradient flows);
    # the legend says so: the arrows' own "input (no grad)" split the PNG slide in two
    assert [p.name for p in _slides(tmp_path, "tutorial_net", "png")] == ["tutorial_net-out.png"]
    svgs = [p.read_text(encoding="utf-8") for p in _slides(tmp_path, "tutorial_net", "svg")]
    assert not any("input (no grad)" in svg for svg in svgs)
    assert sum(svg.count('class="edge input"') for svg in svgs) >= 2
    assert "an input that does not require grad" in svgs[-1]  # the legend's line
    bare = tmp_path / "no-legend"
    bare.mkdir()
    svgs = [
        p.read_text(encoding="utf-8") for p in _slides(bare, "tutorial_net", "svg", "--no-legend")
    ]
    assert any("input (no grad)" in svg for svg in svgs)
