"""bench/speed_gpu.py: refuses to record GPU figures without a GPU; its CPU dry run writes a
file that the page's loader will not take for a GPU reference."""

from __future__ import annotations

import json

import pytest
import torch

from bench import speed_gpu
from gradviz.speed import timing_reference
from gradviz.util.reference import ReferenceFileError, load_reference


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU refusal")
def test_refuses_without_a_gpu(capsys):
    assert speed_gpu.main([]) == 2
    assert "No CUDA GPU on this host" in capsys.readouterr().err


def test_cpu_run_may_not_write_the_reference_file(capsys):
    assert speed_gpu.main(["--device", "cpu"]) == 2
    assert "must not write the GPU reference file" in capsys.readouterr().err


def test_cpu_dry_run_writes_a_file_the_loader_rejects(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(speed_gpu, "QUICK_SIZES", {"elementwise": (1000,), "matmul": (32,)})
    out = tmp_path / "cpu.json"
    argv = ["--device", "cpu", "--quick", "--no-lesson-size", "--dtypes", "float32"]
    argv += ["--repeats", "2", "--out", str(out)]
    assert speed_gpu.main(argv) == 0
    data = json.loads(out.read_text())
    assert data["device"] == "CPU only"
    assert data["command"].startswith("python bench/speed_gpu.py --device cpu")
    assert [(p["workload"], p["size"]) for p in data["points"]] == [
        ("elementwise", 1000),
        ("matmul", 32),
    ]
    assert [c["size"] for c in data["comparisons"]] == [1_000_000]  # not the lesson's full size
    assert data["comparisons"][0]["naive"]["total_s"] > 0
    with pytest.raises(ReferenceFileError, match="no point was measured on a cuda"):
        load_reference(out, timing_reference.REFERENCE_FORMAT)
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "skipped"),
    [([], False), (["--no-lesson-size"], True), (["--no-seed-size"], True)],
)
def test_no_lesson_size_and_its_old_name_no_seed_size(argv, skipped):
    """--no-seed-size, in commands recorded before the rename, still skips the full size."""
    assert speed_gpu.build_parser().parse_args(argv).no_lesson_size is skipped


def test_help_names_the_lesson_not_the_seed(capsys):
    with pytest.raises(SystemExit):
        speed_gpu.build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert "--no-lesson-size" in out and "lesson's full size" in out
    assert "seed" not in out.lower()
