"""AppTest: the Export tab's walk-through for slides (gradviz.ui.autograd.slides): after Run backward it
offers the walk-through as a PDF (a page per backward step plus the final graph) and as an
animated GIF (as many frames), both made when clicked; the GIF by a job worker."""

import io
import re
from pathlib import Path

import pytest
from page_tabs import open_tab
from PIL import Image
from pypdf import PdfReader
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from gradviz.graph.render import dot_available

APP = str(Path(__file__).resolve().parents[2] / "app.py")
pytestmark = pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed")


@pytest.fixture
def deferred(monkeypatch):
    """The download buttons' deferred data, by file name (AppTest's media manager is thrown
    away after each run, and never runs them)."""
    made: dict[str, object] = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        made[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return made


def _labels(at: AppTest) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]


def test_the_walk_through_downloads_have_a_page_and_a_frame_per_step(deferred):
    at = open_tab(AppTest.from_file(APP, default_timeout=120).run(), "Export")
    assert "Download walk-through PDF" not in _labels(at)  # no backward yet
    assert any("Run backward to export its walk-through" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Run backward").click().run()
    assert not at.exception, at.exception
    labels = _labels(at)
    assert "Download walk-through PDF" in labels and "Download walk-through GIF" in labels
    caption = next(c.value for c in at.caption if "pages or frames" in c.value)
    count = int(re.match(r"(\d+) pages or frames", caption).group(1))
    pdf = deferred["gradviz-walkthrough.pdf"]()
    assert len(PdfReader(io.BytesIO(pdf)).pages) == count
    gif = deferred["gradviz-walkthrough.gif"]()
    with Image.open(io.BytesIO(gif)) as im:
        assert im.format == "GIF" and im.n_frames == count
    steps = open_tab(at, "Backward walk-through").slider(key="step").max  # its steps
    assert steps >= 2 and count == steps + 1


def test_the_graph_as_a_16_9_slide_with_a_preview_beside_its_download(monkeypatch):
    named: list[str] = []
    original = MediaFileManager.add

    def add(self, data, mimetype, coordinates, file_name=None, **kw):
        named.append(file_name)
        return original(self, data, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add", add)
    at = open_tab(AppTest.from_file(APP, default_timeout=120).run(), "Export")
    at.radio(key="export_size").set_value("Slide (16:9)").run()
    assert not at.exception, at.exception
    assert "Download slide SVG" in _labels(at)
    assert "y-graph-slide.svg" in named  # named after the lesson's output, y
    assert any('alt="slide preview"' in m.value for m in at.markdown)
    about = next(c.value for c in at.caption if "smallest text" in c.value)
    assert int(re.search(r"smallest text (\d+) px", about).group(1)) >= 18
    at.radio(key="slide_legend").set_value("off")
    at.radio(key="export_fmt").set_value("png").run()
    assert not at.exception, at.exception
    assert "Download slide PNG" in _labels(at) and "y-graph-slide.png" in named
