"""A heavy job a page follows across its script runs. Streamlit runs a page's script again on
every click, and Stop (the page's or Streamlit's own) stops the script at its next element:
the job goes on in its worker, so the page keeps a `Followed` in session state and the next
script run takes it up where the last one stopped reading. The Speed and Training pages use
it; neither holds a worker job or a stop timer itself.

- `Followed(job)`: the job (from services.jobs.start_in_line) and how many of its events the
  page has taken.
- `events(poll_s, connected, since)`: its events one at a time, and None after each poll (a
  batch, or nothing new within `poll_s`): the page redraws then, which is where Streamlit can
  stop a script. A closed tab (`connected()` False) ends the job (services.jobs.follow).
- `end()`: stop it if it still runs (killed STOP_GRACE_S later); `unread()`: what it sent
  that the page has not taken (to keep after a Stop).
- `stop_unless_read_within(seconds)`: the script stopped while following: unless a next
  script run reads the job's events within `seconds` (it follows the job on), the page was
  stopped (Streamlit's Stop, a session gone), and so is the job (`page_stopped`).
- `retire()`: end it and wait until its worker is gone, so a new job's figures are its own.
- `failure(what, plain)`: None when the job gave its result; else why not, in one sentence
  (the job's own message for an error of a kind in `plain`).

No torch and no Streamlit here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from gradviz.services.jobs import end, error_kind, follow
from gradviz.workers.jobs import STOP_GRACE_S, Job


class Followed:
    """A page's job and how far the page has read it."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.seen = 0  # events the page has taken
        self.page_stopped = False  # stopped because no script run took it up

    def events(
        self, poll_s: float, connected: Callable[[], bool] = lambda: True, since: int | None = None
    ) -> Iterator[object | None]:
        """The events after `since` (default: the ones not taken yet), each counted as taken
        when it is given, and None after each poll. Ends when the job has ended and every
        event is read, or when `connected()` says the page has gone (the job is ended)."""
        if since is not None:
            self.seen = since
        for batch in follow(self.job, self.seen, poll_s, connected):
            for event in batch:
                self.seen += 1
                yield event
            yield None

    def unread(self) -> list:
        """The events the job sent that the page has not taken."""
        return self.job.events[self.seen :]

    def end(self) -> None:
        """Stop the job if it still runs (it is killed STOP_GRACE_S after the request)."""
        end(self.job)

    def retire(self) -> None:
        """End the job and wait for its worker to go (its CPU free for the next job)."""
        self.end()
        self.job.wait(STOP_GRACE_S + 5.0)

    def stop_unless_read_within(self, seconds: float) -> None:
        """Unless its events are read again within `seconds` (a next script run took it up),
        mark the job stopped by the page and ask it to stop."""
        left = time.monotonic()

        def check() -> None:
            if self.job.last_read <= left and not self.job.finished:
                self.page_stopped = True
                self.job.stop()

        timer = threading.Timer(seconds, check)
        timer.daemon = True
        timer.start()

    def failure(self, what: str, plain: tuple[str, ...] = ()) -> str | None:
        """None when the job gave its result; its own message when it failed with an error
        of a kind in `plain` (gradviz.workers.protocol.ErrorKind values: one the job words for
        people); else why it ended without one, naming `what`."""
        job = self.job
        if job.status == "done":
            return None
        if error_kind(job) in plain:
            return job.message
        return job.describe_failure(what)
