"""`python -m gradviz speed`, through its own parser (cli.py also loads commands that other
branches add)."""

from __future__ import annotations

import argparse
import json

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
