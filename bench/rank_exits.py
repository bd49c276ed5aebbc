"""How often a two-rank training run fails as its ranks end: gradviz's own launcher
(gradviz.training.distributed.launch, spawned ranks) and torchrun (`python -m
torch.distributed.run --nproc-per-node 2 -m gradviz train ...`), each run a few seconds on a
tiny generated image folder (3 classes, 16 images each, 2 epochs, batch 8).

A rank that ends by the interpreter's shutdown can abort there ("terminate called without an
active exception": the process group's C++ state torn down), which fails a complete run; the
ranks now end by gradviz.training.distributed.exit_rank. This counts the failures.

    python bench/rank_exits.py [--runs 40] [--only launch|torchrun]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from gradviz.training.distributed import DistributedError, RunSpec, launch  # noqa: E402
from tests.unit.training.image_folders import colour_folder  # noqa: E402


def _drain(events) -> None:
    while True:
        try:
            next(events)
        except StopIteration:
            return


def launched(folder: Path) -> str | None:
    """One run of the launcher; the failure's text, or None."""
    spec = RunSpec(
        source={"kind": "folder", "path": str(folder)},
        device="cpu",
        epochs=2,
        batch_size=8,
        threads=1,
        timeout_s=20.0,
    )
    try:
        _drain(launch(spec, 2))
    except DistributedError as exc:
        return str(exc)
    return None


def torchrun(folder: Path, save: Path) -> str | None:
    """One torchrun run of the command line; the failure's last lines, or None."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "-m"]
    cmd += ["gradviz", "train", "--data", str(folder), "--device", "cpu", "--epochs", "2"]
    cmd += ["--batch-size", "8", "--save", str(save)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if out.returncode == 0:
        return None
    lines = [ln for ln in out.stderr.splitlines() if "terminate" in ln or "Signal" in ln]
    return f"status {out.returncode}: " + " | ".join(lines[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--only", choices=["launch", "torchrun"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = colour_folder(Path(tmp) / "d", per_class=16)
        ways = {
            "launch": lambda: launched(folder),
            "torchrun": lambda: torchrun(folder, Path(tmp) / "w.pt"),
        }
        for name, run in ways.items():
            if args.only and name != args.only:
                continue
            failed, started = 0, time.perf_counter()
            for i in range(args.runs):
                why = run()
                if why is not None:
                    failed += 1
                    print(f"{name} run {i + 1}: {why}", flush=True)
            took = time.perf_counter() - started
            print(f"{name}: {failed} of {args.runs} runs failed ({took:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
