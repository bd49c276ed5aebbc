"""The backward walk-through (gradviz.graph.walkthrough's frames) as an animated GIF: Graphviz
draws each frame as a PNG, Pillow puts them on one canvas size and writes the GIF.

Pillow is imported here only: the CLI calls `gif_bytes`; the page's server never imports this
module, it sends the PNGs to a job worker that runs `gif_job` (gradviz.workers.table)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

from PIL import Image

from gradviz.graph.render import CLI_LIMITS, RenderLimits, render_bytes

GIF_MS = 1500  # how long each frame of the GIF stays (the last one twice as long)


def compose(pngs: list[bytes]) -> bytes:
    """PNG frames as one looping GIF, each frame on a white canvas the size of the largest."""
    if not pngs:
        raise ValueError("a GIF needs at least one frame")
    images = [Image.open(io.BytesIO(p)).convert("RGB") for p in pngs]
    width = max(im.width for im in images)
    height = max(im.height for im in images)
    canvases = []
    for im in images:
        canvas = Image.new("RGB", (width, height), "white")
        canvas.paste(im, (0, 0))
        canvases.append(canvas.convert("P", palette=Image.Palette.ADAPTIVE))
    buffer = io.BytesIO()
    canvases[0].save(
        buffer,
        "GIF",
        save_all=True,
        append_images=canvases[1:],
        duration=[GIF_MS] * (len(canvases) - 1) + [2 * GIF_MS],
        loop=0,
        disposal=1,
    )
    return buffer.getvalue()


def gif_bytes(dots: list[str], scale: float = 1.0, limits: RenderLimits = CLI_LIMITS) -> bytes:
    """The frames (DOT) as an animated GIF."""
    return compose([render_bytes(d, "png", scale=scale, limits=limits) for d in dots])


def gif_job(pngs: list[bytes], should_stop: Callable[[], bool]) -> Iterator[int]:
    """The job worker's side: the page's PNG frames in, the GIF's bytes out (its result)."""
    if should_stop():
        return b""
    yield len(pngs)
    return compose(pngs)
