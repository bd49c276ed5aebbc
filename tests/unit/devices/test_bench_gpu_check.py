"""bench/gpu_check.py (`make gpu-check`): its dry run works on a host without a GPU (every
step's CPU half, nothing written where the pages read), and its pieces judge what they are
given. The real run is for a machine with CUDA (docs/BENCHMARKS.md, "GPU check")."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gradviz.devices import transfer_reference
from gradviz.speed import timing_reference

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "bench" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(spec)
sys.modules["gpu_check"] = gpu_check  # its dataclasses look their module up
spec.loader.exec_module(gpu_check)


def test_verdicts_case_by_case():
    same = {"error": True, "kind": "runtime", "line": 3, "message": "a", "device_kind": "x"}
    assert gpu_check.compare(same, dict(same)) == ("match", [])
    assert gpu_check.compare(same, same | {"message": "b"}) == ("message differs", ["message"])
    verdict, differs = gpu_check.compare(same, same | {"line": 4, "message": "b"})
    assert verdict == "MISMATCH" and differs == ["line", "message"]
    assert gpu_check.compare({"error": False}, same)[0] == "MISMATCH"


def test_every_lesson_and_toggle_is_a_case():
    from gradviz.devices.lessons import LESSONS

    keys = [c.key for c in gpu_check.device_cases()]
    assert all(f"lesson:{x.key}" in keys for x in LESSONS)
    assert "preset:user_module_device" in keys
    assert any(k.startswith("toggle:tutorial_net:") for k in keys)


def test_gpu_tests_are_found_by_their_marker():
    files = gpu_check.gpu_test_files()
    assert (
        "tests/unit/devices/test_devices_gpu.py" in files
        and "tests/unit/program/test_nn_gpu.py" in files
    )


def test_crossover_per_workload_and_dtype():
    def point(device, size, s):
        return {
            "workload": "elementwise",
            "device": device,
            "dtype": "float32",
            "size": size,
            "iterations": 10,
            "median_s": s,
            "iqr_s": 0.0,
            "repeats": 3,
        }

    speed = {
        "points": [
            point("cpu", 1000, 1e-5),
            point("cuda", 1000, 2e-5),
            point("cpu", 100000, 1e-3),
            point("cuda", 100000, 1e-4),
        ]
    }
    assert gpu_check.crossovers_of(speed) == {"elementwise float32": 100000}


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a host without CUDA")
def test_the_real_run_needs_a_gpu(tmp_path, capsys):
    assert gpu_check.main(["--out", str(tmp_path)]) == 2
    assert "DRY=1" in capsys.readouterr().err


@pytest.mark.slow
def test_make_gpu_check_dry_runs_every_step_and_writes_the_report(tmp_path):
    """`make gpu-check DRY=1 OUT=...`: every step runs its CPU half; the pages' files are
    left alone."""
    before = {
        p: p.read_bytes() if p.exists() else None
        for p in (timing_reference.REFERENCE_PATH, transfer_reference.REFERENCE_PATH)
    }
    done = subprocess.run(
        ["make", "gpu-check", "DRY=1", f"OUT={tmp_path}", f"GPU_CHECK_PY={sys.executable}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["dry_run"] is True
    statuses = {s["name"]: s["status"] for s in report["steps"]}
    assert list(statuses) == list(gpu_check.STEPS)
    assert set(statuses.values()) <= {"dry run", "missing"}, statuses
    rows = json.loads((tmp_path / "simulated_vs_real.json").read_text())["rows"]
    lessons = [r for r in rows if r["case"].startswith("lesson:")]
    assert lessons and all(r["verdict"] == "as the lesson table says" for r in lessons)
    assert "# GPU check (dry run, no GPU)" in (tmp_path / "report.md").read_text()
    for name in ("speed_reference.json", "transfer_reference.json", "lesson_timing.json"):
        assert (tmp_path / name).is_file(), name
    sweep = json.loads((tmp_path / "transfer_reference.json").read_text())["sweep"]
    assert [r["nbytes"] for r in sweep] == [4096, 16384, 65536, 262144, 1048576]
    from gradviz.devices import lessons
    from gradviz.util.reference import ReferenceFileError, load_reference

    with pytest.raises(ReferenceFileError, match="dry run"):  # the page shows real GPUs only
        load_reference(tmp_path / "simulated_vs_real.json", lessons.GPU_CHECK_FORMAT)
    after = {p: p.read_bytes() if p.exists() else None for p in before}
    assert after == before  # a dry run writes nothing the pages read
