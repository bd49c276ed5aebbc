"""The grown language's measured targets: real PyTorch programs, gradviz against plain PyTorch.

Two cases, each timed side by side and alternating (A, B, A, B, ...) so drift on a shared
machine hits both sides; medians and the ratio are printed as a Markdown table.

1. cnn: the PyTorch tutorial's CIFAR network (conv 3->6 k5, pool, conv 6->16 k5, pool,
   fc 400->120->84->10, relu) forward and backward on a batch of 4, with a cross-entropy
   loss, drawn as SVG:
     gradviz: run_program(backward="loss", classic=False) + to_dot + `dot -Tsvg` (CLI_LIMITS)
     plain:   the same text run as Python + loss.backward() + torchviz.make_dot(loss,
              params=net.named_parameters()) + .pipe(format="svg")
   Target: ratio <= 1.5. By default the network is an nn.Sequential of the same layers;
   --class-form uses the tutorial's `class Net(nn.Module)` text on both sides (reported as
   not supported, and skipped, while the language has no classes).

2. sgd: a 1,000-step SGD loop on a small MLP (8 -> 32 -> 1, MSE on 64 fixed samples):
     gradviz, bare: run_program(RunOptions(classic=False))
     gradviz, recorded: the same with RunOptions(quiet_passes=False): every pass recorded
                    (the loop's middle passes run quiet otherwise: gradviz.program.recording.quiet_passes)
     gradviz, page: run_program with the Autograd page's options (RunOptions() defaults:
                    classic=True, no backward target, the host's program limits), and the
                    page's drawing (to_dot + `dot -Tsvg`); the page runs it in a worker
                    process, whose start and pickling are not counted here
     plain:         the same text run as Python
   Target: ratio <= 3 (bare).

    python bench/language_bench.py [--repeats 5] [--threads 1] [--class-form] [--profile]
                                   [--cpu-time] [--split]

--profile runs cProfile on one gradviz run of each case and prints the top functions by
cumulative time; --split times the cnn case by part on each side (the interpreter and graph
model, the DOT text, `dot`).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402
from torchviz import make_dot  # noqa: E402

from gradviz.graph.dot import to_dot  # noqa: E402
from gradviz.graph.render import CLI_LIMITS, render_bytes  # noqa: E402
from gradviz.program.interpreter.run import run_program  # noqa: E402
from gradviz.program.results.limits import DEFAULT_LIMITS  # noqa: E402
from gradviz.program.results.trace import RunOptions  # noqa: E402

sys.setrecursionlimit(20_000)  # torchviz walks the graph recursively

HEADER = """import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
torch.manual_seed(0)
"""

SEQUENTIAL_NET = """net = nn.Sequential(
    nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
    nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
    nn.Flatten(),
    nn.Linear(400, 120), nn.ReLU(),
    nn.Linear(120, 84), nn.ReLU(),
    nn.Linear(84, 10),
)
"""

# The tutorial's text (pytorch.org/tutorials/beginner/blitz/cifar10_tutorial.html).
CLASS_NET = """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
"""

CNN_TAIL = """inputs = torch.randn(4, 3, 32, 32)
labels = torch.tensor([1, 0, 3, 9])
out = net(inputs)
loss = F.cross_entropy(out, labels)
"""

SGD_PROGRAM = (
    HEADER
    + """net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(64, 8)
y = torch.randn(64, 1)
for step in range(1000):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
"""
)

TARGETS = {"cnn": 1.5, "sgd": 3.0}


def cnn_program(class_form: bool) -> str:
    return HEADER + (CLASS_NET if class_form else SEQUENTIAL_NET) + CNN_TAIL


def page_options() -> RunOptions:
    """What the Autograd page asks for a program just submitted (services/cache.run_cached):
    no backward target yet, not ones, not retained, the classic DOT too, the host's limits
    (services.programs.program_limits on a private host: DEFAULT_LIMITS)."""
    return RunOptions(
        backward=None,
        backward_ones=False,
        retain_intermediate=False,
        device_overrides=None,
        limits=DEFAULT_LIMITS,
    )


# ------------------------------------------------------------------ the two sides


def gradviz_cnn(source: str) -> bytes:
    trace = run_program(source, RunOptions(backward="loss", classic=False))
    if trace.error is not None:
        raise RuntimeError(trace.error)
    return render_bytes(to_dot(trace.graph), "svg", limits=CLI_LIMITS)


def plain_cnn(code) -> bytes:
    scope = {"__name__": "plain_cnn"}
    exec(code, scope)  # the same text, as Python
    net, loss = scope["net"], scope["loss"]
    loss.backward()
    return make_dot(loss, params=dict(net.named_parameters())).pipe(format="svg")


def gradviz_sgd_bare() -> None:
    trace = run_program(SGD_PROGRAM, RunOptions(classic=False))
    if trace.error is not None:
        raise RuntimeError(trace.error)


def gradviz_sgd_recorded() -> None:
    """Every pass recorded, as before quiet passes (gradviz.program.recording.quiet_passes)."""
    trace = run_program(SGD_PROGRAM, RunOptions(classic=False, quiet_passes=False))
    if trace.error is not None:
        raise RuntimeError(trace.error)


def gradviz_sgd_page() -> None:
    trace = run_program(SGD_PROGRAM, page_options())
    if trace.error is not None:
        raise RuntimeError(trace.error)
    render_bytes(to_dot(trace.graph), "svg")


def plain_sgd(code) -> None:
    exec(code, {"__name__": "plain_sgd"})


def split_cnn(source: str, code, repeats: int) -> str:
    """Where each side's time goes (medians, ms, alternating): gradviz's run_program,
    to_dot and `dot`; plain PyTorch's exec + backward, make_dot's DOT text and `dot`."""
    ours: list[tuple[float, ...]] = []
    plain: list[tuple[float, ...]] = []
    cpu: list[tuple[float, float]] = []  # process time: steadier than wall time under load
    for i in range(repeats + 1):
        c0, t0 = time.process_time(), time.perf_counter()
        trace = run_program(source, RunOptions(backward="loss", classic=False))
        c1, t1 = time.process_time(), time.perf_counter()
        dot = to_dot(trace.graph)
        t2 = time.perf_counter()
        render_bytes(dot, "svg", limits=CLI_LIMITS)
        c3, t3 = time.process_time(), time.perf_counter()
        scope = {"__name__": "plain_cnn"}
        exec(code, scope)
        scope["loss"].backward()
        c4, t4 = time.process_time(), time.perf_counter()
        graph = make_dot(scope["loss"], params=dict(scope["net"].named_parameters()))
        text = graph.source
        t5 = time.perf_counter()
        graph.pipe(format="svg")
        t6 = time.perf_counter()
        if i:  # the first round warms up
            ours.append((t1 - t0, t2 - t1, t3 - t2))
            plain.append((t4 - t3, t5 - t4, t6 - t5))
            cpu.append((c1 - c0, c4 - c3))
    med = [
        [statistics.median(r[k] for r in side) * 1000 for k in range(3)] for side in (ours, plain)
    ]
    return (
        f"split: gradviz run_program {med[0][0]:.1f} ms, to_dot {med[0][1]:.1f} ms "
        f"({len(dot):,} chars), dot {med[0][2]:.1f} ms | plain exec+backward "
        f"{med[1][0]:.1f} ms, make_dot {med[1][1]:.1f} ms ({len(text):,} chars), "
        f"dot {med[1][2]:.1f} ms | CPU time: run_program "
        f"{statistics.median(c for c, _ in cpu) * 1000:.1f} ms, plain exec+backward "
        f"{statistics.median(c for _, c in cpu) * 1000:.1f} ms"
    )


# ------------------------------------------------------------------ timing


def alternate(fns: dict, repeats: int, clock=time.perf_counter) -> dict[str, list[float]]:
    """Each function once to warm up, then `repeats` rounds running each in turn. Each
    timing ends with a garbage collection, so each side pays for its own cyclic garbage
    (not the side that happens to run next); what was alive before the rounds is frozen
    out of the collections, so one costs only what the function left."""
    for fn in fns.values():
        fn()
    gc.collect()
    gc.freeze()
    times: dict[str, list[float]] = {name: [] for name in fns}
    try:
        for _ in range(repeats):
            for name, fn in fns.items():
                t = clock()
                fn()
                gc.collect()
                times[name].append(clock() - t)
    finally:
        gc.unfreeze()
    return times


def profile(label: str, fn, top: int = 5) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(top + 25)
    return f"### cProfile: {label}\n\n```\n{buf.getvalue().strip()}\n```\n"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.2f} s"


def row(case: str, ours: list[float], plain: list[float], target: float | None) -> str:
    a, b = statistics.median(ours), statistics.median(plain)
    ratio = a / b
    verdict = "—" if target is None else ("met" if ratio <= target else "**not met**")
    goal = "—" if target is None else f"≤ {target:g}"
    return f"| {case} | {ms(a)} | {ms(b)} | {ratio:,.2f} | {goal} | {verdict} |"


def machine_line() -> str:
    try:
        from _app import machine  # bench/_app.py

        return machine()
    except Exception as exc:  # noqa: BLE001 - the table matters more than the label
        return f"unknown machine ({exc})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--class-form",
        action="store_true",
        help="the tutorial's `class Net(nn.Module)` text on both sides of the cnn case",
    )
    ap.add_argument("--profile", action="store_true", help="cProfile the gradviz side")
    ap.add_argument(
        "--split", action="store_true", help="the cnn case's time by part, on each side"
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch.set_num_threads for both sides (0: torch's default); 1 is steadier on a "
        "small shared machine, where the intra-op pool stalls when another process runs",
    )
    ap.add_argument("--skip", choices=["cnn", "sgd"], action="append", default=[])
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="time the sgd case in this process's CPU time (time.process_time), which other "
        "processes on a busy host disturb far less than wall time; --threads 1 with it",
    )
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {machine_line()}")
    print(
        f"# torch {torch.__version__} · threads {torch.get_num_threads()} · "
        f"python {sys.version.split()[0]} · repeats {args.repeats}"
        + (" · sgd in CPU time" if args.cpu_time else "")
    )
    rows = []
    notes = []
    profiles = []

    if "cnn" not in args.skip:
        forms = [("Sequential", False)] + ([("class Net", True)] if args.class_form else [])
        for form, class_form in forms:
            source = cnn_program(class_form)
            code = compile(source, f"<cnn {form}>", "exec")
            case = f"CIFAR Net ({form}) forward+backward → SVG"
            probe = run_program(source, RunOptions(backward="loss", classic=False))
            if probe.error is not None:
                msg = getattr(probe.error, "message", probe.error)
                notes.append(
                    f"- {case}: skipped, the language refuses the program "
                    f"({msg}); `class Net(nn.Module)` needs the class support that is "
                    "not in this branch yet."
                )
                print(f"! {case}: not supported yet: {msg}", file=sys.stderr)
                continue
            nodes = len(probe.graph.nodes)
            t = alternate(
                {"gradviz": lambda s=source: gradviz_cnn(s), "plain": lambda c=code: plain_cnn(c)},
                args.repeats,
            )
            rows.append(row(f"{case} ({nodes} nodes)", t["gradviz"], t["plain"], TARGETS["cnn"]))
            if args.split:
                notes.append(f"- {case}: {split_cnn(source, code, args.repeats)}")
            if args.profile:
                profiles.append(profile(case, lambda s=source: gradviz_cnn(s)))

    if "sgd" not in args.skip:
        code = compile(SGD_PROGRAM, "<sgd>", "exec")
        t = alternate(
            {
                "bare": gradviz_sgd_bare,
                "plain": lambda: plain_sgd(code),
                "page": gradviz_sgd_page,
                "recorded": gradviz_sgd_recorded,
            },
            args.repeats,
            time.process_time if args.cpu_time else time.perf_counter,
        )
        rows.append(
            row(
                "SGD 1,000 steps, MLP 8→32→1: run_program(classic=False)",
                t["bare"],
                t["plain"],
                TARGETS["sgd"],
            )
        )
        rows.append(
            row(
                "SGD 1,000 steps: as the page does (classic DOT + values SVG)",
                t["page"],
                t["plain"],
                None,
            )
        )
        rows.append(
            row(
                "SGD 1,000 steps: every pass recorded (RunOptions(quiet_passes=False))",
                t["recorded"],
                t["plain"],
                None,
            )
        )
        if args.profile:
            profiles.append(
                profile("SGD 1,000 steps, run_program(classic=False)", gradviz_sgd_bare)
            )

    print()
    print("| case | gradviz median | plain PyTorch median | ratio | target | |")
    print("|---|---:|---:|---:|---|---|")
    for r in rows:
        print(r)
    if notes:
        print()
        print("\n".join(notes))
    for p in profiles:
        print()
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
