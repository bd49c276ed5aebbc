"""`python -m gradviz speed`, through its own parser (cli.py also loads commands that other
branches add)."""

from __future__ import annotations

import argparse
import json

import pytest

from gradviz.cli import speed as speed_cmd


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    speed_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["speed", *argv])
    return args.func(args)


def test_compare_prints_naive_and_correct(capsys):
    assert _run(["--size", "10000", "--iterations", "2"]) == 0
    out = capsys.readouterr().out
    assert "naive (lesson):" in out and "correct: median" in out


def test_sweep_as_json(capsys):
    assert _run(["--workload", "matmul", "--sweep", "16", "32", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["size"] for p in data["points"]] == [16, 32]
    assert data["cpu_threads"] >= 1


def test_refusals_are_reported_with_exit_1(capsys):
    assert _run(["--size", str(10**13), "--json"]) == 1
    assert "Choose a smaller size" in json.loads(capsys.readouterr().out)["error"]
    assert _run(["--dtype", "float32", "--size", "0"]) == 1
    assert "at least 1" in capsys.readouterr().err


def test_sweep_reports_skipped_sizes(capsys):
    assert _run(["--sweep", str(10**13), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["points"] == []
    assert "Choose a smaller size" in data["skipped"][0]["reason"]


def test_bad_repeats_is_usage(capsys):
    assert _run(["--repeats", "0"]) == 2


# --- --estimate-gpu: a GPU from its maker's spec sheet -----------------------------------


def test_estimate_gpu_as_json(capsys):
    assert _run(["--estimate-gpu", "H100", "--json", "--repeats", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["label"] == "estimate from spec sheet"
    gpu = data["gpu"]
    assert gpu["key"] == "H100-SXM" and gpu["memory_gbps"] == 3350
    assert gpu["source"].startswith("https://www.nvidia.com/") and gpu["as_of"]
    assert gpu["halved_from_sparse"] == ["tf32_tflops", "bf16_tflops", "fp16_tflops"]
    assert data["job"] == {
        "workload": "elementwise",
        "size": 1_000_000,
        "device": "cpu",
        "dtype": "float32",
        "iterations": 10,
    }
    e = data["estimate"]
    assert e["total_s"] == pytest.approx(e["run_s"] + e["copy_s"])
    assert e["bytes_moved"] == 4 * 10**6 * 63 and e["kernels"] == 21
    assert {a["name"] for a in data["assumptions"]} >= {"Launch overhead", "Host link"}
    assert data["cpu"]["how"].startswith("scaled from a quick run")
    assert data["cpu"]["job_s"] > 0 and data["cpu_threads"] >= 1
    assert set(data["crossover"]) == {"without_copy", "with_copy", "against"}
    steps = data["cifar_step"]
    assert [s["batch"] for s in steps] == [4, 512]
    assert steps[0]["bound"] == "launch overhead" and steps[0]["images_per_s"] > 0


def test_estimate_gpu_against_a_measured_cpu_sweep(capsys):
    assert _run(["--estimate-gpu", "t4", "--workload", "matmul", "--sweep", "16", "64"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("NVIDIA T4: estimate from spec sheet")
    assert "size           16: CPU" in out and "(measured)" in out
    assert "crossover against this CPU, measured" in out
    assert "on cpu" not in out  # the GPU's job is not described as a CPU's


def test_estimate_gpu_without_the_cpu(capsys):
    assert _run(["--estimate-gpu", "rtx 4090", "--no-cpu", "--json", "--dtype", "bfloat16"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gpu"]["key"] == "RTX-4090" and data["cpu_threads"] is None
    assert data["crossover"]["without_copy"] is None
    assert data["estimate"]["bytes_moved"] == 2 * 10**6 * 63  # bfloat16: 2 bytes


def test_unknown_gpu_lists_the_choices(capsys):
    assert _run(["--estimate-gpu", "H900", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert "'H900'" in error and "H100-SXM" in error and "M4-Max" in error
    assert _run(["--estimate-gpu", "H900"]) == 2
    assert "choose one of" in capsys.readouterr().err


def test_a_gpu_without_published_figures_is_refused_with_the_reason(capsys):
    assert _run(["--estimate-gpu", "M1", "--no-cpu", "--json"]) == 1
    assert "no memory bandwidth" in json.loads(capsys.readouterr().out)["error"]
    assert _run(["--estimate-gpu", "m4 max", "--workload", "matmul", "--no-cpu"]) == 1
    assert "no float32 matrix-product peak" in capsys.readouterr().err
