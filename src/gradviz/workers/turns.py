"""Who gets the warm pool's next free worker: visitors take turns, by address first.

A visitor key is `ADDRESS|IDENTITY` (gradviz.ui.visitor makes them: the browser's signed
cookie, shared by all its tabs, behind the client's address) or a bare name, which is an
address of its own. Turns go round the addresses, least recently served first, and round
the identities within an address: so one address holding many identities (private windows,
a script that drops its cookie) gets one turn in a round like any other address, and a
victim elsewhere waits behind at most one program of each other address. Each identity has
one program in flight at a time and, on a public host, a budget of worker-seconds per
minute; a classroom behind one address keeps a budget per student.

Whatever the number of identities, the workers bound the work running at once, and at most
`max_waiting` requests wait in line, none of them longer than it may wait: a request that
would find the line full, or whose estimated wait is past its time, is refused at once with
the wait said. Many identities cannot hold more of the host than its workers and a bounded
line, and a class pressing Run together waits in line rather than being turned away.

While a request waits, the function set in WAITING (a page's placeholder) hears its place in
line and an estimate of the seconds left, each time they change.
"""

from __future__ import annotations

import itertools
import math
import queue
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar

from gradviz.util.busy import Busy

# Set by a page around a run: called with (requests ahead, estimated seconds) while it waits.
WAITING: ContextVar[Callable[[int, float], None] | None] = ContextVar("waiting", default=None)


def address_of(visitor: str) -> str:
    """The address part of a visitor key (the whole key when it names none)."""
    return visitor.partition("|")[0]


class Turns:
    """The line for a pool's idle workers (a queue.Queue the pool fills and this drains)."""

    WINDOW = 60.0  # seconds over which worker time and turns are remembered
    # A job's length before any has been measured: a lesson's run takes about 0.04 s of a
    # warm worker (docs/BENCHMARKS.md, a class of 100), so a whole class fits in one line.
    FIRST_GUESS_S = 0.25

    def __init__(
        self, idle: queue.Queue, workers: int, budget: float | None, max_waiting: int = 256
    ):
        self.idle = idle
        self.workers = max(1, workers)
        self.budget = budget
        self.max_waiting = max_waiting
        self.cond = threading.Condition()
        self.numbers = itertools.count()  # tickets, in order of arrival
        self.lines: dict[str, list[int]] = {}  # visitor -> waiting tickets, oldest first
        self.running: dict[str, int] = {}
        self.served: dict[str, float] = {}  # visitor or address -> when last given a worker
        self.used: dict[str, list[tuple[float, float]]] = {}  # visitor -> (ended, seconds)
        self.job_seconds = self.FIRST_GUESS_S  # a recent job's length (moving average)

    def _order(self, visitor: str) -> tuple[float, float, int]:
        far = float("-inf")
        head = self.lines[visitor][0]
        return (self.served.get(address_of(visitor), far), self.served.get(visitor, far), head)

    def _ready(self) -> list[str]:
        """Visitors whose oldest ticket may take a worker now, next first."""
        ready = [v for v, line in self.lines.items() if line and not self.running.get(v)]
        return sorted(ready, key=self._order)

    def used_seconds(self, visitor: str, now: float) -> float:
        spans = [(end, sec) for end, sec in self.used.get(visitor, ()) if end > now - self.WINDOW]
        self.used[visitor] = spans
        return sum(sec for _, sec in spans)

    def ahead(self, visitor: str, ticket: int) -> tuple[int, float]:
        """Requests to be served before `ticket`, and about how many seconds that takes."""
        ready = self._ready()
        before = ready.index(visitor) if visitor in ready else len(ready)
        own = self.lines[visitor].index(ticket)  # this visitor's older requests, one a round
        count = before + own * len(self.lines)
        if self.running.get(visitor):
            count += 1  # their program in another tab first
        running = sum(self.running.values())
        seconds = self.job_seconds * (count + min(running, self.workers) / 2) / self.workers
        return count, seconds

    def take(self, visitor: str, timeout: float) -> object:
        """A free worker for `visitor` when their turn comes; Busy after `timeout` s."""
        end = time.monotonic() + timeout
        report = WAITING.get()
        with self.cond:
            if self.budget is not None:
                used = self.used_seconds(visitor, time.monotonic())
                if used >= self.budget:
                    wait = self.used[visitor][0][0] + self.WINDOW - time.monotonic()
                    raise Busy(
                        f"you have used {used:.0f} s of the shared program runner in the last "
                        f"minute, the most one visitor may use ({self.budget:.0f} s) on this "
                        f"public server; run it again in about {max(1, round(wait))} s"
                    )
            waiting = sum(len(line) for line in self.lines.values())
            if waiting >= self.max_waiting:
                raise Busy(
                    f"{waiting} programs are waiting for the shared program runner, the most "
                    f"it keeps in line; try again in about {self._eta(waiting)} s"
                )
            work = self._eta(waiting + 1)
            if work > timeout:  # it would wait out its time: say so now
                raise Busy(
                    f"{waiting} programs are waiting for the shared program runner, about "
                    f"{work} s of work, longer than a program may wait "
                    f"({timeout:.0f} s); try again in about {self._eta(waiting)} s"
                )
            ticket = next(self.numbers)
            self.lines.setdefault(visitor, []).append(ticket)
            said = None
            try:
                while True:
                    ready = self._ready()
                    if ready and ready[0] == visitor and self.lines[visitor][0] == ticket:
                        if not self.idle.empty():
                            return self._give(visitor)
                    left = end - time.monotonic()
                    if left <= 0:
                        raise Busy(self._busy_message(visitor, ticket, timeout))
                    if report is not None:
                        count, seconds = self.ahead(visitor, ticket)
                        now = (count, math.ceil(seconds))
                        if now != said:
                            said = now
                            self.cond.release()  # a page's call, outside the line's lock
                            try:
                                report(count, seconds)
                            finally:
                                self.cond.acquire()
                            continue  # the line may have moved meanwhile
                    self.cond.wait(min(left, 0.5))
            finally:
                line = self.lines[visitor]
                line.remove(ticket)
                if not line:
                    del self.lines[visitor]
                self.cond.notify_all()

    def _give(self, visitor: str) -> object:
        w = self.idle.get_nowait()
        self.running[visitor] = self.running.get(visitor, 0) + 1
        now = time.monotonic()
        self.served[visitor] = self.served[address_of(visitor)] = now
        return w

    def _eta(self, count: int) -> int:
        return max(1, math.ceil(self.job_seconds * count / self.workers))

    def _busy_message(self, visitor: str, ticket: int, timeout: float) -> str:
        count, seconds = self.ahead(visitor, ticket)
        if self.running.get(visitor):
            return (
                "you have a program running in another tab or window; programs of one visitor "
                f"run one at a time, and this one waited {timeout:.0f} s for it. Wait for it "
                "to finish (or close the other tab), then run this one again"
            )
        return (
            f"every worker stayed busy for {timeout:.0f} s and {count} "
            f"program{'s are' if count != 1 else ' is'} still ahead of yours (about "
            f"{max(1, math.ceil(seconds))} s); the server is under heavy load, try again then"
        )

    def give_back(self, visitor: str, w: object, seconds: float) -> None:
        with self.cond:
            self.idle.put(w)
            self.running[visitor] -= 1
            if not self.running[visitor]:
                del self.running[visitor]
            now = time.monotonic()
            if seconds > 0:
                self.job_seconds = 0.8 * self.job_seconds + 0.2 * seconds
            if self.budget is not None:
                self.used.setdefault(visitor, []).append((now, seconds))
                for v in list(self.used):  # forget who has not run anything for a minute
                    if not self.used_seconds(v, now):
                        del self.used[v]
            active = set(self.lines) | set(self.running)
            active |= {address_of(v) for v in active}
            for key, at in list(self.served.items()):  # turns are remembered for a minute
                if at < now - self.WINDOW and key not in active:
                    del self.served[key]
            self.cond.notify_all()
