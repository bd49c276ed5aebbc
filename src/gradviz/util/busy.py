"""The one "no room now" error, raised where work waits for room (the warm pool's line,
gradviz.workers.turns; a job's slots, gradviz.workers.jobs), passed on by gradviz.services and
said plainly by the pages and the command line."""

from __future__ import annotations


class Busy(RuntimeError):
    """No room now, with a message saying when to try again: every warm worker stayed busy
    for longer than the queue allows, the visitor is over their share (a program of theirs
    still running, or their budget of worker time used), or every slot for a job is taken."""
