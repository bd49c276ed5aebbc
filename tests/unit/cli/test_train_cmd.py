"""`python -m gradviz train`: JSON on stdout, progress on stderr, exit codes."""

from __future__ import annotations

import argparse
import json

import pytest
import torch

from gradviz.cli import train as train_cmd
from gradviz.training.checkpoint import load_weights
from tests.unit.training.image_folders import colour_folder


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradviz")
    train_cmd.register(parser.add_subparsers(dest="command"))
    return parser


def _run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    return args.func(args)


def test_json_metrics_on_stdout_progress_on_stderr(tmp_path, capsys):
    colour_folder(tmp_path / "d", per_class=8)
    out_file = tmp_path / "w.pt"
    code = _run(
        [
            "train",
            "--data",
            str(tmp_path / "d"),
            "--preset",
            "fast",
            "--device",
            "cpu",
            "--epochs",
            "2",
            "--batch-size",
            "8",
            "--json",
            "--save",
            str(out_file),
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    metrics = json.loads(captured.out)
    assert metrics["device"] == "cpu" and metrics["preset"] == "fast"
    assert set(metrics["per_class_accuracy"]) == {"blue", "green", "red"}
    assert 0 <= metrics["test_accuracy"] <= 1
    assert metrics["test_time_augmentation"] == ("flip" if metrics["arch"] != "tutorial" else None)
    assert (
        metrics["images_seen"] == 48
        and metrics["images_per_s"] > 0
        and metrics["train_seconds"] > 0
    )
    assert "img/s" in captured.err and "ETA" in captured.err
    arch, _ = load_weights(out_file.read_bytes(), num_classes=3)
    assert arch == "fast-cpu"


def test_human_report_like_the_tutorial(tmp_path, capsys):
    colour_folder(tmp_path / "d", per_class=4)
    assert (
        _run(
            [
                "train",
                "--data",
                str(tmp_path / "d"),
                "--preset",
                "fast",
                "--device",
                "cpu",
                "--epochs",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "Accuracy of the network on the 12 test images" in out
    assert "Accuracy for class: red" in out


def test_missing_data_is_a_run_error(tmp_path, capsys):
    assert _run(["train", "--data", str(tmp_path / "nope"), "--device", "cpu", "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "error: Folder" in captured.err and "does not exist" in captured.err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_cuda_absent_is_a_run_error(tmp_path, capsys):
    colour_folder(tmp_path / "d", per_class=1)
    assert _run(["train", "--data", str(tmp_path / "d"), "--device", "cuda"]) == 1
    assert "Cannot train on cuda" in capsys.readouterr().err


def test_usage_errors_exit_2():
    with pytest.raises(SystemExit) as info:
        _parser().parse_args(["train", "--data", "x", "--epochs", "0"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        _parser().parse_args(["train", "--data", "x", "--preset", "slow"])


def test_cifar10_without_network_is_a_clear_run_error(tmp_path, capsys, monkeypatch):
    import urllib.error

    from gradviz.training import sources

    def offline(*a, **k):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
    code = _run(
        ["train", "--data", "cifar10", "--cache-dir", str(tmp_path), "--device", "cpu", "--json"]
    )
    assert code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Could not download CIFAR-10" in captured.err and "Traceback" not in captured.err


def test_json_keys_are_the_documented_ones_and_ctrl_c_stops_cleanly(tmp_path, capsys, monkeypatch):
    """The --json object keeps the keys docs/training.md lists; the first Ctrl-C (SIGINT) ends
    training after the current step and the run is still evaluated and reported."""
    import signal

    real_train = train_cmd.train

    def interrupted(*args, **kwargs):
        for i, event in enumerate(real_train(*args, **kwargs)):
            if i == 1:
                signal.raise_signal(signal.SIGINT)  # as Ctrl-C in the terminal
            yield event

    monkeypatch.setattr(train_cmd, "train", interrupted)
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN in a shell's background job
    colour_folder(tmp_path / "d", per_class=8)
    argv = ["train", "--data", str(tmp_path / "d"), "--device", "cpu", "--batch-size", "4"]
    assert _run([*argv, "--epochs", "50", "--json"]) == 0
    captured = capsys.readouterr()
    metrics = json.loads(captured.out)
    assert set(metrics) == {
        "data",
        "train_images",
        "test_images",
        "preset",
        "arch",
        "device",
        "epochs_done",
        "images_seen",
        "train_seconds",
        "images_per_s",
        "test_accuracy",
        "test_time_augmentation",
        "per_class_accuracy",
        "stopped",
        "peak_gpu_memory_bytes",
    }
    assert metrics["peak_gpu_memory_bytes"] is None  # on the CPU
    assert metrics["stopped"] == "stop requested" and metrics["epochs_done"] < 50
    assert "Stopping after this step" in captured.err and "stopped: stop requested" in captured.err
    assert signal.getsignal(signal.SIGINT) is before  # handed back
