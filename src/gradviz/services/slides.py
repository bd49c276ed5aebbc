"""The backward walk-through as an animated GIF for the page, made in a job worker: the GIF
needs Pillow, which the server never imports. The server draws the frames with Graphviz (under
its render limits) and sends the PNGs; the worker returns the GIF.

No Streamlit and no PIL here."""

from __future__ import annotations

from gradviz.services.jobs import run_now
from gradviz.util import settings
from gradviz.workers.jobs import JobLimits

GIF_SECONDS = 60.0
SLOT = "slides"  # one GIF at a time, server-wide (GRADVIZ_SLIDES_JOBS)


def gif(pngs: list[bytes]) -> bytes:
    """The PNG frames as one animated GIF, composed in a worker. Raises util.busy.Busy
    when another GIF is being made, services.jobs.JobFailed when the worker ends without one."""
    # Memory beyond the worker's own: the frames decoded, twice.
    limits = JobLimits(seconds=GIF_SECONDS, memory_bytes=settings.profile().gif_memory)
    busy = "Another walk-through GIF is being made on this server; try again in a few seconds."
    return run_now(
        "walkthrough_gif", (list(pngs),), limits, SLOT, "making the walk-through GIF", busy
    )
