"""`python -m gradviz run` and `render` run a program with the worker's limits by default.

The CLI used to run in-process with no limits: work past the interpreter's caps (which
the page's worker stops at its wall clock) ran on for as long as it liked.
"""

from __future__ import annotations

import json

from gradviz.cli.main import main
from tests.security.corpus import SANDBOX_ONLY


def test_cli_stops_work_past_the_caps_at_the_worker_limit(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GRADVIZ_SANDBOX", raising=False)
    monkeypatch.setenv("GRADVIZ_RUN_SECONDS", "3")
    prog = tmp_path / "slow.py"
    prog.write_text(SANDBOX_ONLY[0][1], encoding="utf-8")
    assert main(["run", str(prog), "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "limit" and "the limit per run" in error["message"]


def test_cli_default_and_no_sandbox_give_the_same_answer(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GRADVIZ_SANDBOX", raising=False)
    prog = tmp_path / "p.py"
    prog.write_text("x = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\n", "utf-8")
    outputs = []
    for extra in ([], ["--no-sandbox"]):
        assert main(["run", str(prog), "--json", "--backward", "y", *extra]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert outputs[0]["tensors"][0]["grad"] == [3.0, 3.0]
    bad = tmp_path / "bad.py"
    bad.write_text("y = nope + 1\n", "utf-8")
    assert main(["run", str(bad), "--json"]) == 1
