"""The backward walk-through as an animated GIF for the page, made in a job worker: the GIF
needs Pillow, which the server never imports. The server draws the frames with Graphviz (under
its render limits) and sends the PNGs; the worker returns the GIF.

No Streamlit and no PIL here."""

from __future__ import annotations

from gradviz.services.jobs import run_now
from gradviz.util.hosting import public_mode
from gradviz.workers.jobs import JobLimits

GIF_SECONDS = 60.0
GIF_MEMORY = 512 * 1024 * 1024  # beyond the worker's own: the frames decoded, twice
PUBLIC_GIF_MEMORY = 256 * 1024 * 1024
SLOT = "slides"  # one GIF at a time, server-wide (GRADVIZ_SLIDES_JOBS)


def gif(pngs: list[bytes]) -> bytes:
    """The PNG frames as one animated GIF, composed in a worker. Raises util.busy.Busy
    when another GIF is being made, services.jobs.JobFailed when the worker ends without one."""
    memory = PUBLIC_GIF_MEMORY if public_mode() else GIF_MEMORY
    limits = JobLimits(seconds=GIF_SECONDS, memory_bytes=memory)
    busy = "Another walk-through GIF is being made on this server; try again in a few seconds."
    return run_now(
        "walkthrough_gif", (list(pngs),), limits, SLOT, "making the walk-through GIF", busy
    )
