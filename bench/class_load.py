"""A class of 30: N concurrent sessions against one `streamlit run app.py` in public mode,
each submitting its own program on the Autograd page, timed from the submit to the moment
that session's own graph arrives.

The client speaks Streamlit's browser protocol itself (a websocket at /_stcore/stream that
carries BackMsg / ForwardMsg protobufs), so one client process costs a small fraction of the
server: no browser lays out, runs scripts or paints. Each session

- opens the page (a rerun with no widget states, as the browser's first message),
- reads the program editor's and the form's submit button's widget ids from the page's
  elements, and
- per round sends what the browser sends for "Run program": a rerun carrying the editor's
  new text and the submit button's trigger.

Every program names its tensors after its session and round (`s17r1_x`): the round's own
marker must appear in the session's own drawing (the server-laid-out SVG of the plain picture
or the interactive viewer's frame) and no other session's marker anywhere in what that session
received (cross-session leaks). All sessions submit together in each round (a class told to
press Run now), the worst case for the server. The report gives p50/p95 submit->own graph,
errors, leaks, the peak proportional set size of the server's processes (server, forkserver,
workers: the public host's memory cap), and the client's CPU seconds beside the server's,
so the figures are the server's.

With --attackers N, N more sessions send a hostile visitor's programs (ATTACKS: results
that decode big, values-free tensors made into millions of objects, broadcasts hidden in
list comparisons, Markdown in names, graphs that are slow to lay out) over and over while the
class runs, starting before the class presses Run and stopping when it is done. The class's
figures are then the victims'; each attack's outcomes (drawn, refused with what message, an
internal error) are reported, and an internal error or a dead server fails the run.

    python bench/class_load.py [--sessions 30] [--rounds 3] [--workers 1] [--same]
                               [--attackers N] [--python .venv/bin/python] [--url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import re
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path[:0] = [
    str(Path(__file__).resolve().parent),
    str(Path(__file__).resolve().parents[1] / "src"),
]

from _app import ROOT, descendants, free_port, machine, pss, start_streamlit, stop  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ClientState_pb2 import ClientState  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates  # noqa: E402
from tornado.websocket import websocket_connect  # noqa: E402

EDITOR_LABEL = "Program"  # gradviz.ui.autograd.code_editor.text_area (the plain editor)
SUBMIT_LABEL = "Run program"  # and its form's submit button
GRAPH_ALT = 'alt="autograd graph"'  # the plain picture's <img> (gradviz.ui.autograd.graph_tab)
MARKER = re.compile(rb"s(\d+)r(\d+)_x")
DATA_URI = re.compile(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)")
RUN_TIMEOUT = 300.0  # seconds one script run may take before it counts as an error
ERROR_ALERT = 1  # Alert.Format.ERROR
BUSY_TEXT = "Not run yet"  # the page's warning when the visitor's turn did not come


def program(k: int, round_: int, same: bool = False) -> str:
    """Session k's program for a round: its own tensor names and values (`same`: one
    program for the whole class, as when everyone runs the exercise as given)."""
    if same:
        k = 0
    n = f"s{k}r{round_}"
    return (
        f"{n}_x = torch.full((3,), {k + round_ / 10 + 1:.1f}, requires_grad=True)\n"
        f"{n}_w = torch.linspace(-1.0, 1.0, 3, requires_grad=True)\n"
        f"{n}_y = torch.tanh({n}_x * {n}_w + {round_ + 1}.0)\n"
        f"{n}_loss = ({n}_y ** 2).mean()\n"
    )


def _names(prefix: str, n: int) -> str:
    return ", ".join(f"{prefix}{i}" for i in range(n))


# A hostile visitor's programs, each within the language's limits as written (label, source).
ATTACKS = (
    (  # a small result that decodes big: 600 names of 4,096 empty rows each
        "600 values-free tensors named",
        f"x = torch.zeros(600, 4096, 0)\n{_names('a', 600)} = x.unbind()\n",
    ),
    ("10,000,000 empty rows unbound", "x = torch.zeros(10000000, 0)\nparts = x.unbind()\n"),
    ("10,000,000 empty rows as a list", "x = torch.zeros(10000000, 0)\nrows = x.tolist()\n"),
    (
        "a broadcast inside a list comparison",
        "a = torch.zeros(30000, 1)\nb = torch.zeros(1, 30000)\nsame = [a] == [b]\n",
    ),
    (
        "Markdown and a bare URL in names",
        'd = {"![](http://127.0.0.1:9/t.png) www.example.com a@example.com": '
        "torch.ones(2, requires_grad=True)}\n"
        'y = (d["![](http://127.0.0.1:9/t.png) www.example.com a@example.com"] * 2).sum()\n'
        'y.backward()\nprint("see http://127.0.0.1:9/x")\n',
    ),
    (  # edges from one leaf to every rank of a long chain: slow for dot's crossing minimisation
        "a chain whose every step reads the leaf",
        "x = torch.rand(2, requires_grad=True)\ny = x\n"
        "for i in range(400):\n    y = y * 1.01 + x\nloss = y.sum()\nloss.backward()\n",
    ),
)


# What the Autograd page says while a program waits for a worker (gradviz.ui.visitor)
WAIT_TEXT = re.compile(rb"Waiting for (?:your turn|a free worker)[^\x00-\x1f\"]*?\(about \d+ s\)")


class Run:
    """What one script run sent: the time its drawing with `marker` arrived, every
    session/round marker seen, and the errors shown."""

    def __init__(self, marker: bytes | None):
        self.marker = marker
        self.graph_at: float | None = None
        self.seen: set[tuple[int, int]] = set()
        self.errors: list[str] = []
        self.waits: list[str] = []  # "Waiting for your turn: ..." as the page said it
        self.widgets: dict[str, str] = {}  # label -> widget id (text_area, button)
        self.page_hash = ""

    def read(self, msg: ForwardMsg, now: float) -> None:
        if msg.HasField("new_session"):
            self.page_hash = msg.new_session.page_script_hash
        if not msg.HasField("delta") or not msg.delta.HasField("new_element"):
            return
        el = msg.delta.new_element
        kind = el.WhichOneof("type")
        raw = msg.SerializeToString()
        for said in WAIT_TEXT.findall(raw):
            self.waits.append(said.decode(errors="replace"))
        texts: list[bytes] = []
        if kind == "markdown":
            body = el.markdown.body
            texts.append(body.encode())
            if GRAPH_ALT in body:
                texts += [base64.b64decode(m) for m in DATA_URI.findall(body)]
        elif kind == "iframe":
            texts.append(el.iframe.srcdoc.encode())
        elif kind == "text_area":
            self.widgets[el.text_area.label] = el.text_area.id
        elif kind == "button" and el.button.is_form_submitter:
            self.widgets[el.button.label] = el.button.id
        elif kind == "exception":
            self.errors.append(f"exception: {el.exception.message[:200]}")
        elif kind == "alert":
            if el.alert.format == ERROR_ALERT or BUSY_TEXT in el.alert.body:
                self.errors.append(f"alert: {el.alert.body[:200]}")
        else:
            texts.append(msg.SerializeToString())
        for text in texts:
            self.seen.update((int(a), int(b)) for a, b in MARKER.findall(text))
            graph = kind == "iframe" or (kind == "markdown" and GRAPH_ALT in el.markdown.body)
            if graph and self.graph_at is None and self.marker and self.marker in text:
                self.graph_at = now


class Session:
    """One visitor's tab, speaking Streamlit's websocket protocol."""

    def __init__(self, url: str):
        self.url = url.replace("http", "ws", 1) + "/_stcore/stream"
        self.conn = None
        self.page_hash = ""
        self.widgets: dict[str, str] = {}

    async def open(self) -> Run:
        self.conn = await websocket_connect(
            self.url, subprotocols=["streamlit"], max_message_size=512 * 1024 * 1024
        )
        run = await self._rerun(ClientState(query_string="", page_script_hash=""), None)
        self.page_hash = run.page_hash
        self.widgets = run.widgets
        if EDITOR_LABEL not in self.widgets or SUBMIT_LABEL not in self.widgets:
            run.errors.append(f"the page has no editor form: widgets {sorted(self.widgets)}")
        return run

    async def submit(self, source: str, marker: bytes) -> tuple[Run, float]:
        """Press "Run program" with `source` in the editor: the run and when it was sent."""
        states = WidgetStates(
            widgets=[
                WidgetState(id=self.widgets[EDITOR_LABEL], string_value=source),
                WidgetState(id=self.widgets[SUBMIT_LABEL], trigger_value=True),
            ]
        )
        state = ClientState(page_script_hash=self.page_hash, widget_states=states)
        sent = time.perf_counter()
        return await self._rerun(state, marker), sent

    async def _rerun(self, state: ClientState, marker: bytes | None) -> Run:
        back = BackMsg(rerun_script=state)
        await self.conn.write_message(back.SerializeToString(), binary=True)
        run = Run(marker)
        deadline = time.perf_counter() + RUN_TIMEOUT
        while True:
            data = await asyncio.wait_for(
                self.conn.read_message(), max(0.1, deadline - time.perf_counter())
            )
            if data is None:
                raise ConnectionError("the server closed the websocket")
            msg = ForwardMsg()
            msg.ParseFromString(data)
            run.read(msg, time.perf_counter())
            if msg.HasField("script_finished"):
                # FINISHED_EARLY_FOR_RERUN (2): the script starts again; wait for that run
                if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    return run

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


async def attacker(url: str, k: int, out: dict, stop: asyncio.Event) -> None:
    """A hostile tab: ATTACKS in turn (starting at the k-th) until the class is done; each
    outcome is counted under its attack: "drawn", the first words of the page's alert, or
    "INTERNAL ERROR" (an exception element) / the connection's failure."""
    s = Session(url)
    try:
        await s.open()
        i = k
        while not stop.is_set():
            label, source = ATTACKS[i % len(ATTACKS)]
            i += 1
            try:
                run, _ = await s.submit(source, None)
            except Exception as exc:  # noqa: BLE001 - counted, reported
                out["attacks"].setdefault(label, []).append(f"FAILED: {type(exc).__name__}")
                return
            internal = [e for e in run.errors if e.startswith("exception")]
            alerts = [e.split(": ", 1)[1] for e in run.errors if e.startswith("alert")]
            if internal:
                outcome = "INTERNAL ERROR: " + internal[0]
            elif alerts:
                outcome = "alert: " + " ".join(alerts[0].split())[:90]
            else:
                outcome = "ran, no error"
            out["attacks"].setdefault(label, []).append(outcome)
            out["attack_runs"] += 1
            out["attacking"].set()
    except Exception as exc:  # noqa: BLE001 - counted, reported
        out["attacks"].setdefault("(attacker's tab)", []).append(f"FAILED: {type(exc).__name__}")
    finally:
        s.close()


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


async def student(url: str, k: int, rounds: int, same: bool, out: dict, go: list) -> None:
    s = Session(url)
    try:
        t0 = time.perf_counter()
        first = await s.open()
        out["open"].append(time.perf_counter() - t0)
        for e in first.errors:
            out["errors"].append((k, -1, e))
        if first.errors:
            return
        for r in range(rounds):
            await go[r].wait()  # the whole class presses Run together
            mine = (0 if same else k, r)
            marker = f"s{mine[0]}r{r}_x".encode()
            run, sent = await s.submit(program(k, r, same), marker)
            done = time.perf_counter()
            for e in run.errors:
                out["errors"].append((k, r, e))
            if run.waits:
                out.setdefault("waits", []).append((k, r, run.waits[0]))
            if run.graph_at is None:
                out["errors"].append((k, r, "no drawing with this session's program arrived"))
            else:
                out["latency"].append(run.graph_at - sent)
                out["by_round"].setdefault(r, []).append(run.graph_at - sent)
            out["finished"].append(done - sent)
            others = {m for m in run.seen if m[0] != mine[0]}
            if others:
                out["leaks"].append((k, r, sorted(others)))
            out["arrived"][r] += 1
            if out["arrived"][r] == out["sessions"] and r + 1 < rounds:
                go[r + 1].set()
    except Exception as exc:  # noqa: BLE001 - counted, reported
        out["errors"].append((k, None, f"{type(exc).__name__}: {str(exc)[:200]}"))
        for r in range(rounds):  # do not leave the others waiting for this session
            out["arrived"][r] += 1
            if out["arrived"][r] == out["sessions"] and r + 1 < rounds:
                go[r + 1].set()
    finally:
        s.close()


async def drive(
    url: str, sessions: int, rounds: int, same: bool, mark=None, attackers: int = 0
) -> dict:
    """The class's sessions, after one visit that starts the server's workers; `mark()` is
    called between the two (where CPU counting starts). With `attackers`, that many hostile
    tabs run ATTACKS from before the class presses Run until it is done."""
    out: dict = {
        "latency": [],
        "finished": [],
        "open": [],
        "errors": [],
        "leaks": [],
        "by_round": {},
        "arrived": [0] * rounds,
        "sessions": sessions,
        "attacks": {},
        "attack_runs": 0,
        "attacking": asyncio.Event(),
    }
    go = [asyncio.Event() for _ in range(rounds)]
    # One visit first, so the timed sessions meet a started server and worker pool.
    warm = Session(url)
    try:
        await warm.open()
    finally:
        warm.close()
    if mark is not None:
        mark()
    stop = asyncio.Event()
    hostile = [asyncio.create_task(attacker(url, k, out, stop)) for k in range(attackers)]
    if hostile:  # the class presses Run once the first attack has been answered
        await asyncio.wait_for(out["attacking"].wait(), RUN_TIMEOUT)
    tasks = [asyncio.create_task(student(url, k, rounds, same, out, go)) for k in range(sessions)]
    while len(out["open"]) + sum(e[1] == -1 or e[1] is None for e in out["errors"]) < sessions:
        await asyncio.sleep(0.05)  # every tab open before the class presses Run
    t0 = time.perf_counter()
    go[0].set()
    await asyncio.gather(*tasks)
    out["wall"] = time.perf_counter() - t0
    stop.set()
    await asyncio.gather(*hostile)
    return out


def cpu_seconds(pids: list[int]) -> dict[str, float]:
    """User + system CPU seconds of a server's processes, from /proc: the server's own
    ("server"), its reaped children ("graphviz": the `dot` layouts), and the rest ("workers":
    the forkserver, the program workers and their reaped children)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {"server": 0.0, "graphviz": 0.0, "workers": 0.0}
    for i, pid in enumerate(pids):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = [int(v) for v in f.read().rsplit(")", 1)[1].split()[11:15]]
        except (OSError, IndexError, ValueError):
            continue
        if i == 0:  # descendants() lists the server first
            out["server"] += (fields[0] + fields[1]) / tick
            out["graphviz"] += (fields[2] + fields[3]) / tick
        else:
            out["workers"] += sum(fields) / tick
    return out


class Watch:
    """Peak proportional set size of a process tree, sampled every `every` seconds."""

    def __init__(self, pid: int, every: float = 1.0):
        self.pid, self.every, self.peak = pid, every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(pss(p) for p in descendants(self.pid)))
            self._stop.wait(self.every)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(
    python: str,
    sessions: int,
    rounds: int,
    workers: int | None = None,
    same: bool = False,
    url: str | None = None,
    env: dict | None = None,
    app: Path = ROOT,
    attackers: int = 0,
) -> dict:
    """Start a public-mode server of `app`'s app.py and src/ (unless `url`), drive the
    class, and stop the server."""
    proc = None
    if url is None:
        extra = {"GRADVIZ_PUBLIC": "1", "PYTHONPATH": str(app / "src"), **(env or {})}
        if workers is not None:
            extra["GRADVIZ_WORKERS"] = str(workers)
        port = free_port()
        proc = start_streamlit(app / "app.py", port, 180.0, extra, python)
        url = f"http://127.0.0.1:{port}"
    try:
        start_cpu: dict = {}

        def mark() -> None:  # after the first visit: the forkserver's torch import is done
            tree = descendants(proc.pid) if proc else []
            start_cpu.update(server=cpu_seconds(tree), client=client_cpu())

        with Watch(proc.pid) if proc else Watch(os.getpid()) as watch:
            out = asyncio.run(drive(url, sessions, rounds, same, mark, attackers))
            tree = descendants(proc.pid) if proc else []
            server1, server0 = cpu_seconds(tree), start_cpu["server"]
            out["server_cpu"] = {k: server1[k] - server0[k] for k in server1} if proc else None
        out["client_cpu"] = client_cpu() - start_cpu["client"]
        out["peak_pss"] = watch.peak if proc else None
        out["processes"] = len(tree)
        out["alive"] = proc is None or proc.poll() is None
    finally:
        if proc is not None:
            stop(proc)
    return out


def report(out: dict, args) -> list[str]:
    """Print the class's figures; return the attack outcomes that broke something."""
    lat, fin = out["latency"], out["finished"]
    print(f"machine: {machine()}")
    print(f"load average before: {args.load_before}; after: {os.getloadavg()}")
    print(
        f"sessions={args.sessions} rounds={args.rounds} workers={args.workers or 'default'} "
        f"programs={'one for all' if args.same else 'one per session and round'} public=on"
    )
    print(f"app: {args.app}")
    if out["open"]:
        print(f"page open s: p50={statistics.median(out['open']):.2f} max={max(out['open']):.2f}")
    if lat:
        print(
            f"submit->own graph s: p50={statistics.median(lat):.2f} "
            f"p95={percentile(lat, 0.95):.2f} max={max(lat):.2f} (n={len(lat)}); "
            f"submit->run finished p95={percentile(fin, 0.95):.2f}; wall {out['wall']:.1f} s"
        )
        for r, values in sorted(out["by_round"].items()):
            print(
                f"  round {r}: p50={statistics.median(values):.2f} "
                f"p95={percentile(values, 0.95):.2f} max={max(values):.2f} (n={len(values)})"
            )
    if out.get("server_cpu") is not None:
        cpu = out["server_cpu"]
        server = sum(cpu.values())
        share = out["client_cpu"] / (server + out["client_cpu"]) if server else 0.0
        print(
            f"cpu s: server tree {server:.1f} (server {cpu['server']:.1f}, graphviz "
            f"{cpu['graphviz']:.1f}, forkserver+workers {cpu['workers']:.1f}; "
            f"{out['processes']} processes), client {out['client_cpu']:.1f}: "
            f"client share {share:.1%}"
        )
        print(f"peak PSS of the server's processes: {out['peak_pss'] / 1e6:.0f} MB")
    else:
        print(f"cpu s: client {out['client_cpu']:.1f}")
    waits = out.get("waits", [])
    print(
        f"runs told to wait (the page's 'Waiting for your turn'): {len(waits)}"
        + (f"; e.g. session {waits[-1][0]} round {waits[-1][1]}: {waits[-1][2]!r}" if waits else "")
    )
    print(f"errors={len(out['errors'])} leaks={len(out['leaks'])} server_alive={out['alive']}")
    for e in out["errors"][:10]:
        print("  error:", e)
    for e in out["leaks"][:10]:
        print("  leak:", e)
    if not out["attacks"]:
        return []
    print(f"attackers: {args.attackers}, {out['attack_runs']} attack runs answered")
    return report_attacks(out)


def report_attacks(out: dict) -> list[str]:
    """Print each attack's outcomes with their counts; return the ones that broke something
    (an internal error, a failed connection)."""
    broken = []
    for label, outcomes in out["attacks"].items():
        counts: dict[str, int] = {}
        for o in outcomes:
            counts[o] = counts.get(o, 0) + 1
        broken += [o for o in outcomes if o.startswith(("INTERNAL", "FAILED"))]
        print(f"  {label}:")
        for o, n in sorted(counts.items(), key=lambda kv: -kv[1]):
            print(f"    {n:3d} x {o}")
    return broken


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=None, help="GRADVIZ_WORKERS (default: 1)")
    ap.add_argument("--same", action="store_true", help="one program for the whole class")
    ap.add_argument(
        "--attackers", type=int, default=0, help="hostile tabs sending ATTACKS during the class"
    )
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--url", default=None, help="a running server instead of starting one")
    ap.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the server (repeatable), e.g. a Streamlit setting",
    )
    ap.add_argument(
        "--app",
        type=Path,
        default=ROOT,
        help="a tree with app.py and src/ to serve (another version: "
        "git archive REV app.py src | tar -x -C DIR), default this checkout",
    )
    args = ap.parse_args()
    args.load_before = os.getloadavg()
    out = run(
        args.python,
        args.sessions,
        args.rounds,
        args.workers,
        args.same,
        args.url,
        env=dict(item.split("=", 1) for item in args.env),
        app=args.app,
        attackers=args.attackers,
    )
    broken = report(out, args)
    ok = not out["errors"] and not out["leaks"] and out["alive"] and not broken
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
