"""The walk-through's GIF (gradviz.graph.walkthrough_gif) and the page's way of making it in a
job worker (gradviz.services.slides)."""

import io

import pytest
from PIL import Image

from gradviz.graph import walkthrough_gif
from gradviz.graph.render import dot_available, render_bytes
from gradviz.services import slides


def _png(width: int, height: int, colour: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, "PNG")
    return buffer.getvalue()


def test_compose_puts_every_frame_on_the_largest_canvas_and_holds_the_last():
    gif = walkthrough_gif.compose([_png(40, 20, "red"), _png(10, 60, "blue")])
    with Image.open(io.BytesIO(gif)) as im:
        assert im.n_frames == 2 and im.size == (40, 60)
        assert im.info["loop"] == 0
        durations = []
        for k in range(im.n_frames):
            im.seek(k)
            durations.append(im.info["duration"])
    assert durations == [walkthrough_gif.GIF_MS, 2 * walkthrough_gif.GIF_MS]
    with pytest.raises(ValueError):
        walkthrough_gif.compose([])


def test_the_job_returns_the_gif_and_stops_early_when_asked():
    gen = walkthrough_gif.gif_job([_png(8, 8, "red")], should_stop=lambda: False)
    assert next(gen) == 1
    with pytest.raises(StopIteration) as end:
        next(gen)
    assert end.value.value.startswith(b"GIF8")
    with pytest.raises(StopIteration) as end:
        next(walkthrough_gif.gif_job([_png(8, 8, "red")], should_stop=lambda: True))
    assert end.value.value == b""


@pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed")
def test_the_page_s_gif_is_made_in_a_worker_from_graphviz_pngs():
    pngs = [render_bytes(f"digraph {{ a -> b{k} }}", "png") for k in range(3)]
    with Image.open(io.BytesIO(slides.gif(pngs))) as im:
        assert im.format == "GIF" and im.n_frames == 3
