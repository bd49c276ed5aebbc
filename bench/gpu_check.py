"""Every GPU claim gradviz makes, checked on a real GPU in one command: `make gpu-check`.

    python bench/gpu_check.py [--dry-run] [--out DIR] [--only STEP ...] [--data FOLDER]

Steps (each runs on its own; one that fails or lacks something is reported and the rest go on):
  tests       the `gpu`-marked tests (pytest -m gpu), which skip on hosts without CUDA
  simulated   every device lesson, device preset and device-toggle case, run on simulated
              CUDA and on the real GPU, compared case by case (outcome, PyTorch's message,
              line, explanation): simulated_vs_real.json/.md
  references  the Speed page's reference (bench/speed_gpu.py: the lesson's loop naive and
              correct, the sweep, the crossovers) and the Devices page's copy costs (pageable
              and pinned, both directions, 4 KiB to 1 GiB), written where the pages read them
  lesson      seed 003's own GPU program timed as written (time.time(), no synchronize) and
              correctly (synchronize; CUDA events)
  training    the tutorial network (2 epochs) and the fast preset: accuracy, seconds,
              images/s, peak GPU memory
  api         the library API and the CLI on CUDA tensors, the page's run in real-CUDA mode
              (in a sandbox worker), and a DDP run over NCCL on every GPU (torchrun)
  estimates   the Speed page's spec-sheet estimates beside what `references` measured
Everything lands in DIR (default docs/gpu/): report.json, report.md and one file per step;
the summary is printed and the exit status is 1 if any step failed.

--dry-run (`make gpu-check DRY=1`, for hosts without a GPU and CI): each step runs its CPU or
simulated half and says what it would measure; nothing is written where the pages read, and
the default DIR is build/gpu-check-dry. On a GPU host --dry-run is still a dry run.

It uses the Python it runs on and fetches nothing: a step that needs what is missing (a
package, Graphviz's `dot`, the CIFAR-10 subset) says so and the others go on. Pure-Python
wheels can be unpacked into a folder on PYTHONPATH first (docs/BENCHMARKS.md, "GPU check").
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

STEPS = ("tests", "simulated", "references", "lesson", "training", "api", "estimates")
PASSED, FAILED, MISSING, DRY = "passed", "failed", "missing", "dry run"
SEED_003 = "seeds/003_7b84d5b2b111b516.txt"  # under shared/, beside or in the checkout


@dataclass
class StepResult:
    name: str
    status: str  # passed | failed | missing (something it needs is not here) | dry run
    seconds: float = 0.0
    summary: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)


class StepMissing(Exception):
    """Something the step needs is not on this machine (said in the report, not a failure)."""


@dataclass
class Check:
    out: Path
    dry: bool
    data_dir: Path | None
    python: str = sys.executable

    @property
    def ran(self) -> str:
        """The status of a step that ran to its end: passed, or "dry run" without a GPU."""
        return DRY if self.dry else PASSED

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        paths = [str(SRC), str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(":") if p]
        env["PYTHONPATH"] = ":".join(paths)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def command(self, args: list[str], timeout: float) -> subprocess.CompletedProcess:
        """Run `python ARGS` from the repository root; its output is kept in the result."""
        try:
            return subprocess.run(
                [self.python, *args],
                cwd=ROOT,
                env=self.env(),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"`python {' '.join(args)}` ran past {timeout:.0f} s") from exc

    def write(self, name: str, data) -> Path:
        path = self.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = data if isinstance(data, str) else json.dumps(data, indent=1) + "\n"
        path.write_text(text, encoding="utf-8")
        return path


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _last_json(stdout: str) -> dict:
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"no JSON line in the output: {_tail(stdout, 5)!r}")


# ----------------------------------------------------------------------------- the machine


def machine() -> dict:
    """GPU model, driver, CUDA and torch versions, host and date."""
    import torch

    facts = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "host": platform.node(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "cpus": os.cpu_count(),
        "gpus": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "driver": None,
        "dot": shutil.which("dot"),
    }
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            answer = subprocess.run(
                [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
            )
            facts["driver"] = answer.stdout.strip().splitlines()[0] if answer.stdout else None
        except (OSError, subprocess.SubprocessError, IndexError):
            pass
    from importlib import metadata

    for name in ("streamlit", "torchviz", "graphviz", "torchvision"):
        try:
            facts[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            facts[name] = None
    return facts


# ----------------------------------------------------------------------------- 1. tests


def gpu_test_files() -> list[str]:
    """The test files holding `gpu`-marked tests (only those are collected: the others may
    need what a bare GPU machine lacks, such as Streamlit)."""
    found = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if "pytest.mark.gpu" in text:
            found.append(str(path.relative_to(ROOT)))
    return found


def step_tests(check: Check) -> StepResult:
    files = gpu_test_files()
    base = ["-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", *files]
    if check.dry:
        done = check.command([*base, "--collect-only"], 300)
        if done.returncode != 0:
            raise RuntimeError(f"collecting the GPU tests failed:\n{_tail(done.stdout)}")
        count = sum(1 for line in done.stdout.splitlines() if "::" in line)
        return StepResult(
            "tests",
            DRY,
            summary=[f"would run {count} GPU tests from {len(files)} files: {', '.join(files)}"],
            data={"files": files, "tests": count},
        )
    done = check.command([*base, "-rs", f"--junitxml={check.out / 'gpu_tests.xml'}"], 420)
    check.write("gpu_tests.log", done.stdout + done.stderr)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "no output"
    status = PASSED if done.returncode == 0 else FAILED
    summary = [f"pytest -m gpu: {last}"]
    if status == FAILED:
        summary.append(_tail(done.stdout, 30))
    return StepResult("tests", status, summary=summary, data={"files": files, "result": last})


# ----------------------------------------------------------------------------- 2. simulated


@dataclass(frozen=True)
class Case:
    key: str
    title: str
    source: str
    overrides: tuple[tuple[str, str], ...] = ()
    gpus: int = 1
    expected: object = None  # the DeviceLesson, when the case is a lesson


def device_cases() -> list[Case]:
    """Every device lesson; every preset that names a device; every preset with its first
    leaf moved to the GPU by the device toggle (RunOptions.device_overrides)."""
    from gradviz.devices.lessons import LESSONS
    from gradviz.program.interpreter.run import run_program
    from gradviz.program.presets import PRESETS
    from gradviz.program.results.trace import RunOptions

    cases = [Case(f"lesson:{x.key}", x.title, x.source, gpus=x.gpus, expected=x) for x in LESSONS]
    for preset in PRESETS:
        if "cuda" in preset.source or "device" in preset.source:
            cases.append(Case(f"preset:{preset.key}", preset.title, preset.source))
        trace = run_program(preset.source, RunOptions(simulate_cuda=True, classic=False))
        leaves = [t.name for t in trace.tensors if t.is_leaf and "." not in t.name]
        if leaves:
            cases.append(
                Case(
                    f"toggle:{preset.key}:{leaves[0]}",
                    f"{preset.title}, {leaves[0]} moved to the GPU",
                    preset.source,
                    ((leaves[0], "cuda"),),
                )
            )
    return cases


def outcome(trace) -> dict:
    """What a run of a case gives, in the terms the page shows."""
    err = trace.error
    if err is None:
        return {
            "error": False,
            "devices": sorted({t.device for t in trace.tensors}),
            "copies": sorted({e.copy for e in trace.graph.edges if e.copy} if trace.graph else []),
        }
    device = err.details.device
    return {
        "error": True,
        "kind": err.kind,
        "message": err.message,
        "line": err.line,
        "explanation": err.details.explanation,
        "device_kind": device.kind if device else None,
        "devices": sorted(device.devices) if device else None,
        "move": device.move if device else None,
        "fix": device.fix_code if device else None,
    }


def compare(sim: dict, real: dict) -> tuple[str, list[str]]:
    """The verdict on one case: 'match', 'message differs' (PyTorch words it otherwise on a
    real GPU; the page shows whichever it got) or 'MISMATCH' (a simulation bug)."""
    differs = [k for k in sorted(set(sim) | set(real)) if sim.get(k) != real.get(k)]
    if not differs:
        return "match", []
    if differs == ["message"]:
        return "message differs", differs
    return "MISMATCH", differs


def _against_table(case: Case, sim: dict) -> tuple[str, list[str]]:
    """Dry run: a lesson's simulated outcome against what its table says PyTorch does."""
    lesson = case.expected
    if lesson is None:
        return "not run on a GPU", []
    want = {"error": lesson.error}
    if lesson.error:
        want |= {
            "line": lesson.line,
            "device_kind": lesson.kind,
            "devices": sorted(lesson.devices),
            "move": lesson.move,
            "fix": lesson.fix,
        }
    differs = [k for k, v in want.items() if sim.get(k) != v]
    return ("as the lesson table says" if not differs else "MISMATCH with the table"), differs


def step_simulated(check: Check) -> StepResult:
    import torch

    from gradviz.program.interpreter.run import run_program
    from gradviz.program.results.trace import RunOptions

    rows = []
    for case in device_cases():
        overrides = dict(case.overrides) or None
        sim = outcome(
            run_program(
                case.source,
                RunOptions(simulate_cuda=True, classic=False, device_overrides=overrides),
            )
        )
        row = {"case": case.key, "title": case.title, "simulated": sim}
        if check.dry:
            row["verdict"], row["differs"] = _against_table(case, sim)
        elif torch.cuda.device_count() < case.gpus:
            row["verdict"], row["differs"] = f"needs {case.gpus} GPUs: not compared", []
        else:
            real = outcome(
                run_program(
                    case.source,
                    RunOptions(simulate_cuda=False, classic=False, device_overrides=overrides),
                )
            )
            row["real"] = real
            row["verdict"], row["differs"] = compare(sim, real)
        rows.append(row)
    check.write(
        "simulated_vs_real.json", {"machine": machine(), "dry_run": check.dry, "rows": rows}
    )
    check.write("simulated_vs_real.md", simulated_markdown(rows, check.dry))
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    bad = [r["case"] for r in rows if r["verdict"].startswith("MISMATCH")]
    status = FAILED if bad else check.ran
    summary = [f"{len(rows)} cases: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))]
    if bad:
        summary.append("mismatched: " + ", ".join(bad))
    return StepResult("simulated", status, summary=summary, data={"counts": counts, "bad": bad})


def _cell(out: dict | None) -> str:
    if out is None:
        return "—"
    if not out["error"]:
        return "runs; devices " + ", ".join(out["devices"])
    return f"{out['kind']} at line {out['line']}: {out['message']}".replace("|", "\\|")


def simulated_markdown(rows: list[dict], dry: bool) -> str:
    head = "| case | simulated CUDA | real GPU | verdict |\n|---|---|---|---|\n"
    lines = [
        "# Simulated CUDA against a real GPU",
        "",
        "Dry run: no GPU here; lessons are checked against their table."
        if dry
        else "Each case ran on simulated CUDA and on the real GPU (bench/gpu_check.py).",
        "",
        head.rstrip("\n"),
    ]
    for row in rows:
        verdict = row["verdict"] + (f" ({', '.join(row['differs'])})" if row["differs"] else "")
        lines.append(
            f"| {row['case']} | {_cell(row['simulated'])} | {_cell(row.get('real'))} | {verdict} |"
        )
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- 3. references


def step_references(check: Check) -> StepResult:
    from gradviz.devices import transfer, transfer_reference
    from gradviz.speed import timing_reference

    facts = machine()
    if check.dry:
        speed_out = check.out / "speed_reference.cpu.json"
        args = ["bench/speed_gpu.py", "--device", "cpu", "--quick", "--dtypes", "float32"]
        args += ["--repeats", "1", "--no-lesson-size", "--out", str(speed_out)]
    else:
        speed_out = timing_reference.REFERENCE_PATH
        args = ["bench/speed_gpu.py", "--repeats", "3", "--max-step-s", "2"]
        args += ["--dtypes", "float32", "tf32"]
    done = check.command(args, 240)
    check.write("speed_gpu.log", done.stdout + done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"bench/speed_gpu.py failed:\n{_tail(done.stdout + done.stderr)}")
    speed = json.loads(speed_out.read_text(encoding="utf-8"))
    if not check.dry:
        speed["driver"] = facts["driver"]
        speed_out.write_text(json.dumps(speed, indent=1) + "\n", encoding="utf-8")
    check.write("speed_reference.json", speed)
    crossovers = crossovers_of(speed)
    device = "cpu" if check.dry else "cuda:0"
    sizes = transfer.COPY_SWEEP_BYTES[:5] if check.dry else transfer.COPY_SWEEP_BYTES
    copies_out = check.out / "transfer.cpu.json" if check.dry else transfer_reference.REFERENCE_PATH
    copies = transfer.record(copies_out, device, sizes, extra={"driver": facts["driver"]})
    check.write("transfer_reference.json", copies)
    biggest = [r for r in copies["sweep"] if r["nbytes"] == max(sizes)]
    rates = ", ".join(f"{r['direction']} {r['memory']} {r['gb_per_s']:.1f} GB/s" for r in biggest)
    summary = [
        f"speed: {len(speed['points'])} points, {len(speed.get('comparisons', []))} naive/correct "
        f"comparisons; crossovers {crossovers}",
        f"copies: {len(copies['measurements'])} rows, sweep of {len(copies['sweep'])}; at "
        f"{max(sizes) // 2**20} MiB: {rates}",
    ]
    if check.dry:
        summary.append("dry run: measured on the CPU into the output folder, not the pages' files")
    return StepResult(
        "references",
        check.ran,
        summary=summary,
        data={"crossovers": crossovers, "speed_file": str(speed_out), "copies": str(copies_out)},
    )


def crossovers_of(speed: dict) -> dict[str, int | None]:
    """Per workload and dtype, the size from which the GPU beats this machine's CPU."""
    from gradviz.speed import timing

    found: dict[str, int | None] = {}
    groups: dict[str, list] = {}
    for p in speed["points"]:
        groups.setdefault(f"{p['workload']} {p['dtype']}", []).append(p)
    for key, points in sorted(groups.items()):
        if {p["device"].split(":")[0] for p in points} >= {"cpu", "cuda"}:
            found[key] = timing.crossover(timing.Point(**p) for p in points)
    return found


# ----------------------------------------------------------------------------- 4. the lesson


def seed_003(shape: tuple[int, ...], loops: int, device: str) -> float:
    """Seed 003's timed program on `device`, as the lesson writes it: time.time() around
    making the tensors, moving them and the loop, with no synchronize."""
    import torch

    with torch.no_grad():
        time_start = time.time()
        tensor1 = torch.randn(*shape).to(device)
        tensor2 = torch.randn(*shape).to(device)
        result = tensor1 * tensor2
        for _ in range(loops):
            result = result + tensor1 * tensor2
        time_end = time.time()
    return time_end - time_start


def lesson_child(shape: tuple[int, ...], loops: int, device: str) -> dict:
    """In a fresh process (the lesson paid CUDA's start-up too): seed 003 as written, then the
    loop again, warm, timed without and with torch.cuda.synchronize(), then between CUDA
    events. On the CPU they agree up to noise (there is no queue)."""
    import torch

    cuda = device.startswith("cuda")
    as_written = seed_003(shape, loops, device)
    if cuda:
        torch.cuda.synchronize()
    events = None
    with torch.no_grad():
        t1, t2 = torch.randn(*shape, device=device), torch.randn(*shape, device=device)
        if cuda:
            torch.cuda.synchronize()
        t0 = time.time()
        result = t1 * t2
        for _ in range(loops):
            result = result + t1 * t2
        queued = time.time() - t0
        if cuda:
            torch.cuda.synchronize()
        synced = time.time() - t0
        if cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            result = t1 * t2
            for _ in range(loops):
                result = result + t1 * t2
            end.record()
            end.synchronize()
            events = start.elapsed_time(end) / 1000.0
    return {
        "shape": list(shape),
        "loops": loops,
        "device": device,
        "as_written_s": as_written,
        "warm_no_sync_s": queued,
        "warm_synchronized_s": synced,
        "cuda_events_s": events,
    }


def step_lesson(check: Check) -> StepResult:
    seeds = [ROOT / "shared" / SEED_003, ROOT.parent / "shared" / SEED_003]
    written = any(
        seed.is_file() and "torch.randn(100, 1000, 1000).cuda()" in seed.read_text("utf-8")
        for seed in seeds
    )
    runs = []
    plan = [((10, 100, 100), 20, "cpu")] if check.dry else [((100, 1000, 1000), 1000, "cuda")]
    plan.append(((100, 1000, 1000), 10, "cpu") if not check.dry else ((10, 100, 100), 20, "cpu"))
    for shape, loops, device in plan:
        arg = json.dumps([list(shape), loops, device])
        done = check.command([__file__, "--lesson-child", arg], 400)
        if done.returncode != 0:
            raise RuntimeError(f"the lesson's program failed:\n{_tail(done.stderr)}")
        runs.append(_last_json(done.stdout))
    check.write("lesson_timing.json", {"seed_program_found": written, "runs": runs})
    summary = []
    for r in runs:
        line = (
            f"{r['device']} {'x'.join(map(str, r['shape']))}, {r['loops']} loops: as written "
            f"{r['as_written_s']:.3f} s; warm, no sync {r['warm_no_sync_s']:.3f} s, "
            f"synchronized {r['warm_synchronized_s']:.3f} s"
        )
        if r["cuda_events_s"] is not None:
            line += f", CUDA events {r['cuda_events_s']:.3f} s"
        summary.append(line)
    if not check.dry:
        cpu = runs[-1]
        per_loop = cpu["warm_synchronized_s"] / (cpu["loops"] + 1)
        summary.append(
            f"the lesson's CPU half at 1000 loops: about {per_loop * 1001:.1f} s, scaled from "
            f"{cpu['loops']} loops (not run in full)"
        )
    return StepResult("lesson", check.ran, summary=summary, data={"runs": runs})


# ----------------------------------------------------------------------------- 5. training


def find_data(check: Check) -> tuple[str, str]:
    """(the --data argument, in words): CIFAR-10 already downloaded, else the shared subset."""
    from gradviz.training.sources import default_cache_dir

    cache = Path(default_cache_dir())
    if (cache / "cifar-10-batches-py").is_dir():
        return "cifar10", f"CIFAR-10 (all of it, from {cache})"
    folders = [check.data_dir] if check.data_dir else []
    folders += [ROOT / "shared/data/cifar10-subset", ROOT.parent / "shared/data/cifar10-subset"]
    for folder in folders:
        if (folder / "train").is_dir():
            return str(folder), f"the shared CIFAR-10 subset at {folder} (5,000/1,000 images)"
    raise StepMissing("no CIFAR-10 here: neither downloaded nor the shared subset (--data)")


def step_training(check: Check) -> StepResult:
    data, words = find_data(check)
    device = "cpu" if check.dry else "cuda"
    plan = {
        "tutorial": ["--epochs", "2"] if not check.dry else ["--epochs", "1", "--time-limit", "8"],
        "fast": [] if not check.dry else ["--time-limit", "8"],
    }
    runs = {}
    for preset, extra in plan.items():
        args = ["-m", "gradviz", "train", "--data", data, "--preset", preset, "--device", device]
        done = check.command([*args, *extra, "--json"], 400)
        if done.returncode != 0:
            raise RuntimeError(f"training {preset} failed:\n{_tail(done.stderr)}")
        runs[preset] = _last_json(done.stdout)
    check.write("training.json", {"data": words, "runs": runs})
    summary = [f"data: {words}"]
    for preset, r in runs.items():
        peak = r.get("peak_gpu_memory_bytes")
        summary.append(
            f"{preset}: {100 * r['test_accuracy']:.1f}% test accuracy after {r['epochs_done']} "
            f"epochs, {r['train_seconds']:.2f} s, {r['images_per_s']:,.0f} images/s"
            + (f", peak GPU memory {peak / 2**20:,.0f} MiB" if peak else "")
        )
    return StepResult("training", check.ran, summary=summary, data={"runs": runs})


# ----------------------------------------------------------------------------- 6. api


API_PROGRAM = (
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
    "w = torch.randn(3, device='cuda', requires_grad=True)\n"
    "xg = x.to('cuda')\n"
    "loss = (xg * w).sum()\n"
    "loss.backward()\n"
)


def _library_graph(device: str) -> dict:
    import torch

    import gradviz
    from gradviz.graph import render

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.randn(3, device=device, requires_grad=True)
    xg = x.to(device)
    loss = (xg * w).sum()
    fig = gradviz.draw(loss)
    out = {
        "nodes": len(fig.graph.nodes),
        "devices": sorted({n.device for n in fig.graph.nodes if n.device}),
        "copies": sorted({e.copy for e in fig.graph.edges if e.copy}),
    }
    if render.dot_available():
        out["svg_bytes"] = len(fig.svg())
    else:
        out["svg_bytes"] = None
    return out


def step_api(check: Check) -> StepResult:
    from gradviz.program.results.trace import RunOptions
    from gradviz.services.programs import run_isolated
    from gradviz.workers.pool import Pool, SandboxLimits

    problems, summary, data = [], [], {}
    device = "cpu" if check.dry else "cuda:0"
    lib = _library_graph(device)
    data["library"] = lib
    summary.append(
        f"library draw on {device}: {lib['nodes']} nodes on {lib['devices']}, copies "
        f"{lib['copies']}" + ("" if lib["svg_bytes"] else " (no `dot` here: not drawn)")
    )
    if not check.dry and ("cuda:0" not in lib["devices"] or not lib["copies"]):
        problems.append("the library's graph has no cuda:0 node or no copy edge")

    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "on_cuda.py"
        program.write_text(API_PROGRAM, encoding="utf-8")
        done = check.command(["-m", "gradviz", "run", str(program), "--json"], 180)
        if done.returncode != 0:
            problems.append(f"`gradviz run --json` failed: {_tail(done.stderr or done.stdout)}")
        else:
            cli = json.loads(done.stdout)
            devices = sorted({t["device"] for t in cli.get("tensors", [])})
            data["cli"] = {"devices": devices, "error": cli.get("error")}
            summary.append(f"CLI run --json: tensors on {devices}, error {cli.get('error')}")
            if cli.get("error") or "cuda:0" not in devices:
                problems.append("the CLI's run failed or has no cuda:0 tensor")

    with Pool(SandboxLimits(workers=1, run_seconds=120.0), one_shot=True) as pool:
        trace = run_isolated(
            API_PROGRAM, RunOptions(simulate_cuda=check.dry, classic=False), pool=pool
        )
    page = {
        "error": trace.error.message if trace.error else None,
        "simulated": trace.simulated,
        "devices": sorted({t.device for t in trace.tensors}),
        "memory": [asdict(m) for m in trace.memory],
    }
    data["page"] = page
    summary.append(
        f"page's run in a worker ({'simulated' if trace.simulated else 'real'} CUDA): "
        f"{page['error'] or 'ran'}; tensors on {page['devices']}"
    )
    if trace.error or (not check.dry and (trace.simulated or not trace.memory)):
        problems.append(f"the page's real-CUDA run: {page}")

    data["ddp"] = ddp_run(check)
    summary.append(data["ddp"]["summary"])
    if not data["ddp"]["ok"]:
        problems.append(data["ddp"]["summary"])
    summary.extend(f"FAILED: {p}" for p in problems)
    status = FAILED if problems else check.ran
    check.write("api.json", data)
    return StepResult("api", status, summary=summary, data=data)


def ddp_run(check: Check) -> dict:
    """One epoch of the tutorial network under torchrun: NCCL on every GPU, or gloo on the
    CPU in a dry run (2 processes)."""
    import torch

    try:
        data, _ = find_data(check)
    except StepMissing as exc:
        return {"ok": True, "summary": f"DDP: not run ({exc})"}
    world = 2 if check.dry else max(1, torch.cuda.device_count())
    device = "cpu" if check.dry else "cuda"
    args = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={world}"]
    args += ["-m", "gradviz", "train", "--data", data, "--preset", "tutorial"]
    args += ["--device", device, "--epochs", "1", "--json"]
    if check.dry:
        args += ["--time-limit", "5"]
    done = check.command(args, 300)
    backend = "gloo" if check.dry else "nccl"
    if done.returncode != 0:
        return {"ok": False, "summary": f"DDP ({backend}, {world}): {_tail(done.stderr, 8)}"}
    result = _last_json(done.stdout)
    return {
        "ok": True,
        "backend": backend,
        "world": world,
        "result": result,
        "summary": f"DDP over {backend}, world size {world}: "
        f"{100 * result['test_accuracy']:.1f}% after {result['epochs_done']} epoch, "
        f"{result['images_per_s']:,.0f} images/s",
    }


# ----------------------------------------------------------------------------- 7. estimates


def step_estimates(check: Check) -> StepResult:
    from gradviz.speed import estimate, gpus, timing

    path = check.out / "speed_reference.json"
    if not path.is_file():
        raise StepMissing("no speed reference from this run (run the references step first)")
    speed = json.loads(path.read_text(encoding="utf-8"))
    gpu = gpus.find("H100") if check.dry else gpus.for_device_name(speed["device"])
    if gpu is None:
        raise StepMissing(f"no spec sheet for {speed['device']} in gradviz.speed.gpus")
    want = "cpu" if check.dry else "cuda"
    rows = []
    for p in speed["points"]:
        if not p["device"].startswith(want):
            continue
        point = timing.Point(**p)
        try:
            guess = estimate.estimate(gpu, point.job)
        except estimate.NoEstimate as exc:
            rows.append({**p, "estimate_s": None, "ratio": None, "why": str(exc)})
            continue
        rows.append(
            {
                **p,
                "estimate_s": guess.run_s,
                "bound": guess.bound,
                "ratio": p["median_s"] / guess.run_s if guess.run_s > 0 else None,
            }
        )
    check.write("estimates.json", {"gpu": gpu.key, "rows": rows})
    ratios = sorted(r["ratio"] for r in rows if r["ratio"])
    by_workload: dict[str, list[float]] = {}
    for r in rows:
        if r["ratio"]:
            by_workload.setdefault(f"{r['workload']} {r['dtype']}", []).append(r["ratio"])
    summary = [f"{len(rows)} points against the {gpu.key} spec sheet (measured / estimate)"]
    for key, values in sorted(by_workload.items()):
        values.sort()
        summary.append(
            f"{key}: median {values[len(values) // 2]:.2f}x, from {values[0]:.2f}x to "
            f"{values[-1]:.2f}x"
        )
    if check.dry:
        summary.append("dry run: CPU points against a GPU's sheet, ratios mean nothing")
    return StepResult(
        "estimates",
        check.ran,
        summary=summary,
        data={"gpu": gpu.key, "ratios": ratios},
    )


# ----------------------------------------------------------------------------- the run


RUNNERS: dict[str, Callable[[Check], StepResult]] = {
    "tests": step_tests,
    "simulated": step_simulated,
    "references": step_references,
    "lesson": step_lesson,
    "training": step_training,
    "api": step_api,
    "estimates": step_estimates,
}


def run_step(check: Check, name: str) -> StepResult:
    print(f"== {name}", flush=True)
    start = time.perf_counter()
    try:
        result = RUNNERS[name](check)
    except StepMissing as exc:
        result = StepResult(name, MISSING, summary=[str(exc)])
    except Exception as exc:  # noqa: BLE001 - one step's failure is reported, the rest run
        result = StepResult(
            name, FAILED, summary=[f"{type(exc).__name__}: {exc}"], data={"traceback": ""}
        )
        result.data["traceback"] = traceback.format_exc()
    result.seconds = round(time.perf_counter() - start, 2)
    for line in result.summary:
        print(f"   {line}", flush=True)
    print(f"   -> {result.status} in {result.seconds:.1f} s", flush=True)
    return result


def report_markdown(facts: dict, results: list[StepResult], dry: bool) -> str:
    title = "GPU check (dry run, no GPU)" if dry else f"GPU check on {facts['gpu']}"
    lines = [
        f"# {title}",
        "",
        f"- date: {facts['date']}",
        f"- GPU: {facts['gpu'] or 'none'} ({facts['gpus']} visible), driver {facts['driver']}",
        f"- torch {facts['torch']}, CUDA {facts['cuda']}, Python {facts['python']}",
        f"- Graphviz dot: {facts['dot'] or 'not installed'}; streamlit {facts['streamlit']}, "
        f"torchviz {facts['torchviz']}",
        "- command: `python bench/gpu_check.py" + (" --dry-run" if dry else "") + "`",
        "",
        "Every number below came from this run.",
        "",
        "| step | status | seconds |",
        "|---|---|---:|",
    ]
    lines += [f"| {r.name} | {r.status} | {r.seconds:.1f} |" for r in results]
    for r in results:
        lines += ["", f"## {r.name}: {r.status}", ""]
        lines += [f"- {line}" if "\n" not in line else f"```\n{line}\n```" for line in r.summary]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="no GPU: the CPU halves only")
    parser.add_argument("--out", type=Path, help="default docs/gpu (dry: build/gpu-check-dry)")
    parser.add_argument("--only", nargs="+", choices=STEPS, help="run these steps only")
    parser.add_argument("--data", type=Path, help="a CIFAR-10 folder (train/, test/)")
    parser.add_argument("--lesson-child", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.lesson_child:
        shape, loops, device = json.loads(args.lesson_child)
        print(json.dumps(lesson_child(tuple(shape), loops, device)))
        return 0
    import torch

    dry = args.dry_run
    if not dry and not torch.cuda.is_available():
        print(
            "No CUDA GPU here: `make gpu-check` proves the GPU claims on a machine with one. "
            "`make gpu-check DRY=1` (--dry-run) runs every step's CPU half.",
            file=sys.stderr,
        )
        return 2
    out = args.out or (ROOT / ("build/gpu-check-dry" if dry else "docs/gpu"))
    out.mkdir(parents=True, exist_ok=True)
    check = Check(out.resolve(), dry, args.data)
    facts = machine()
    print(
        f"gpu-check{' (dry run)' if dry else ''}: {facts['gpu'] or 'no GPU'}, driver "
        f"{facts['driver']}, torch {facts['torch']}, CUDA {facts['cuda']} -> {out}",
        flush=True,
    )
    results = []
    for name in args.only or STEPS:
        results.append(run_step(check, name))
        # written after every step: a run cut short still leaves what it measured
        check.write(
            "report.json", {"machine": facts, "dry_run": dry, "steps": [asdict(r) for r in results]}
        )
        check.write("report.md", report_markdown(facts, results, dry))
    failed = [r.name for r in results if r.status == FAILED]
    print("\nsummary: " + ", ".join(f"{r.name} {r.status} ({r.seconds:.0f} s)" for r in results))
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
