"""`python -m gradviz run|render`: called in-process (fast), plus one real subprocess.

These run programs with GRADVIZ_SANDBOX=off (in this process, like --no-sandbox): the
default, a sandbox worker with the app's limits, is tested in tests/security/test_cli_limits.py.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradviz.cli.main import main
from gradviz.graph import render
from gradviz.graph.dot import GRAD_RAMP, THEMES
from gradviz.program.presets import PRESETS_BY_KEY

LESSON = PRESETS_BY_KEY["lesson"].source
SRC = Path(__file__).resolve().parents[3] / "src"
needs_dot = pytest.mark.skipif(not render.dot_available(), reason="Graphviz `dot` not installed")


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    monkeypatch.setenv("GRADVIZ_SANDBOX", "off")


@pytest.fixture
def lesson_file(tmp_path: Path) -> Path:
    path = tmp_path / "lesson.py"
    path.write_text(LESSON, encoding="utf-8")
    return path


def write(tmp_path: Path, text: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- run


def test_run_json_lesson_gives_its_gradient(lesson_file, capsys):
    code = main(["run", str(lesson_file), "--json", "--backward", "y"])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)
    assert data["error"] is None
    x = next(t for t in data["tensors"] if t["name"] == "x")
    assert x["grad"] == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)
    assert x["shape"] == [3]
    assert x["dtype"] == "float32"
    assert x["device"] == "cpu"
    assert x["requires_grad"] is True and x["is_leaf"] is True
    assert x["value"] == [1.0, 2.0, 3.0]
    assert [t["name"] for t in data["tensors"]] == ["x", "a", "b", "c", "y"]
    assert data["backward"]["output"] == "y"
    assert data["backward"]["order"][0] == "MeanBackward0"


def test_run_json_without_backward_has_no_grads(lesson_file, capsys):
    assert main(["run", str(lesson_file), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backward"] is None
    assert all(t["grad"] is None for t in data["tensors"])


def test_run_json_program_backward_is_reported(tmp_path, capsys):
    prog = write(tmp_path, LESSON + "y.backward()\n")
    assert main(["run", str(prog), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backward"]["output"] == "y"
    assert data["backward"]["origin"] == "program"


def test_run_json_is_standard_json_with_nan_and_inf(tmp_path, capsys):
    prog = write(
        tmp_path,
        "x = torch.tensor([1.0, 0.0], requires_grad=True)\ny = torch.log(x)\n"
        "z = y.sum()\nw = z * 0 / 0\nz.backward()\n",
    )
    assert main(["run", str(prog), "--json"]) == 0
    out = capsys.readouterr().out

    def refuse_constant(name):
        raise ValueError(f"non-standard JSON constant {name}")

    data = json.loads(out, parse_constant=refuse_constant)
    by_name = {t["name"]: t for t in data["tensors"]}
    assert by_name["y"]["value"] == [0.0, "-inf"]
    assert by_name["x"]["grad"] == [1.0, "inf"]
    assert by_name["w"]["value"] == "nan"


def test_run_table_output(lesson_file, capsys):
    assert main(["run", str(lesson_file), "--backward", "y"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header == ["name", "shape", "dtype", "device", "value", "grad"]
    x_row = next(line for line in out.splitlines() if line.startswith("x "))
    assert "float32" in x_row and "cpu" in x_row
    assert "[2.0000, 2.6667, 3.3333]" in x_row


def test_run_prints_bare_expressions_as_a_notebook_shows_them(tmp_path, capsys):
    prog = write(
        tmp_path,
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\nx.device\nx * 2\n"
        "torch.eye(2)\nx.sum().backward()\n",
    )
    assert main(["run", str(prog)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == [
        "Out[2]: device(type='cpu')",
        "Out[3]: tensor([2., 4.], grad_fn=<MulBackward0>)",
        "Out[4]:",
        "tensor([[1., 0.],",
        "        [0., 1.]])",
    ]
    assert any(line.startswith("_3 ") for line in out)  # x * 2 is on the graph as _3
    assert main(["run", str(prog), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["shown"][:2] == [
        {"line": 2, "text": "device(type='cpu')"},
        {"line": 3, "text": "tensor([2., 4.], grad_fn=<MulBackward0>)"},
    ]
    assert len(data["shown"]) == 3  # backward() gives None: nothing shown


def test_run_program_error_exit_1_json(tmp_path, capsys):
    prog = write(tmp_path, "x = torch.ones(3)\ny = torch.onse(3)\n")
    assert main(["run", str(prog), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    err = data["error"]
    assert err["kind"] == "name"
    assert err["line"] == 2
    assert err["col"] == 5
    assert "ones" in err["hint"]
    assert [t["name"] for t in data["tensors"]] == ["x"]  # what ran before the error


def test_run_program_error_readable(tmp_path, capsys):
    prog = write(tmp_path, "x = torch.ones(3)\ny = torch.onse(3)\n")
    assert main(["run", str(prog)]) == 1
    captured = capsys.readouterr()
    assert f"{prog}:2:5: name: " in captured.err
    assert "ones" in captured.err  # the hint
    assert "x " in captured.out  # the table of what exists


def test_run_runtime_error_has_fix(tmp_path, capsys):
    prog = write(tmp_path, PRESETS_BY_KEY["mistake_backward_twice"].source)
    assert main(["run", str(prog)]) == 1
    err = capsys.readouterr().err
    assert f"{prog}:4:1: runtime: " in err
    assert "retain_graph" in err


def test_run_backward_unknown_name(lesson_file, capsys):
    assert main(["run", str(lesson_file), "--json", "--backward", "yy"]) == 1
    err = json.loads(capsys.readouterr().out)["error"]
    assert err["kind"] == "name"
    assert "`y`" in err["hint"]


def test_run_ones_for_non_scalar(tmp_path, capsys):
    prog = write(tmp_path, "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 3\n")
    assert main(["run", str(prog), "--json", "--backward", "y"]) == 1
    err = json.loads(capsys.readouterr().out)["error"]
    assert "scalar" in err["message"]
    assert main(["run", str(prog), "--json", "--backward", "y", "--ones"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tensors"][0]["grad"] == [3.0, 3.0]
    assert data["backward"]["gradient"] == "ones"


def test_run_missing_file_exit_2(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.py")]) == 2
    captured = capsys.readouterr()
    assert "no such file" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_run_directory_exit_2(tmp_path, capsys):
    assert main(["run", str(tmp_path)]) == 2
    assert "directory" in capsys.readouterr().err


def test_run_non_utf8_exit_2(tmp_path, capsys):
    prog = tmp_path / "latin1.py"
    prog.write_bytes("x = torch.ones(3)  # café\n".encode("latin-1"))
    assert main(["run", str(prog), "--json"]) == 2
    captured = capsys.readouterr()
    assert "UTF-8" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_run_utf8_bom_is_accepted(tmp_path, capsys):
    prog = tmp_path / "bom.py"
    prog.write_bytes(b"\xef\xbb\xbf" + LESSON.encode())
    assert main(["run", str(prog), "--json"]) == 0
    capsys.readouterr()


def test_run_stdin(monkeypatch, capsys):
    stdin = io.TextIOWrapper(io.BytesIO(LESSON.encode("utf-8")), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["run", "-", "--json", "--backward", "y"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tensors"][0]["grad"] == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)


def test_run_stdin_error_names_stdin(monkeypatch, capsys):
    stdin = io.TextIOWrapper(io.BytesIO(b"y = xx + 1\n"), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["run", "-"]) == 1
    assert "<stdin>:1:5: name: " in capsys.readouterr().err


def test_no_command_is_usage(capsys):
    assert main([]) == 2
    assert "run" in capsys.readouterr().err


def test_bad_option_is_usage(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run"])
    assert exc.value.code == 2
    capsys.readouterr()


def test_module_entry_point_subprocess(lesson_file):
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", str(lesson_file), "--json", "--backward", "y"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    x = data["tensors"][0]
    assert x["name"] == "x"
    assert x["grad"] == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)


# ---------------------------------------------------------------- render


@needs_dot
def test_render_svg(lesson_file, tmp_path, capsys):
    out = tmp_path / "lesson.svg"
    assert main(["render", str(lesson_file), "-o", str(out), "--backward", "y"]) == 0
    data = out.read_bytes()
    assert data.startswith(b"<?xml") or b"<svg" in data
    assert b"2.6667" in data  # the gradient preview is drawn


@needs_dot
def test_render_png(lesson_file, tmp_path):
    out = tmp_path / "lesson.png"
    assert main(["render", str(lesson_file), "-o", str(out), "--scale", "0.5"]) == 0
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@needs_dot
def test_render_pdf(lesson_file, tmp_path):
    out = tmp_path / "lesson.pdf"
    assert main(["render", str(lesson_file), "-o", str(out), "--theme", "print"]) == 0
    assert out.read_bytes().startswith(b"%PDF")


@needs_dot
def test_render_uses_cli_limits_and_no_limits_lifts_them(
    lesson_file, tmp_path, capsys, monkeypatch
):
    """The CLI runs under render.CLI_LIMITS (looser than the app's); --no-limits lifts them."""
    tiny = render.RenderLimits(max_nodes={"svg": 2})
    monkeypatch.setattr(render, "CLI_LIMITS", tiny)
    render.forget_failures()
    out = tmp_path / "lesson.svg"
    assert main(["render", str(lesson_file), "-o", str(out)]) == 1
    assert "too big to draw as SVG" in capsys.readouterr().err
    assert not out.exists()
    assert main(["render", str(lesson_file), "-o", str(out), "--no-limits"]) == 0
    assert b"<svg" in out.read_bytes()


def test_render_dot_with_options(lesson_file, tmp_path):
    out = tmp_path / "lesson.dot"
    args = ["render", str(lesson_file), "-o", str(out), "--rankdir", "LR", "--theme", "dark"]
    assert main([*args, "--no-legend", "--saved", "--backward", "y"]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("digraph")
    assert "rankdir=LR" in text
    assert THEMES["dark"].bg in text
    assert "legend" not in text
    assert "saved" in text  # --saved: PowBackward0's saved self


def test_render_classic_dot(lesson_file, tmp_path):
    out = tmp_path / "classic.dot"
    assert main(["render", str(lesson_file), "-o", str(out), "--view", "classic"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "digraph" in text
    assert "lightblue" in text or "darkolivegreen1" in text


def test_render_classic_nothing_requires_grad(tmp_path, capsys):
    prog = write(tmp_path, "x = torch.ones(3)\ny = x * 2\n")
    out = tmp_path / "c.dot"
    assert main(["render", str(prog), "-o", str(out), "--view", "classic"]) == 1
    assert "requires_grad" in capsys.readouterr().err
    assert not out.exists()


def test_render_program_error_still_draws(tmp_path, capsys):
    prog = write(tmp_path, LESSON + "z = torch.onse(3)\n")
    out = tmp_path / "partial.dot"
    assert main(["render", str(prog), "-o", str(out)]) == 1
    assert f"{prog}:7:5: name: " in capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "digraph" in text and "MeanBackward0" in text


def test_render_syntax_error_draws_empty_graph(tmp_path, capsys):
    prog = write(tmp_path, "x = torch.ones(3)\ny = x +\n")
    out = tmp_path / "empty.dot"
    assert main(["render", str(prog), "-o", str(out)]) == 1
    assert f"{prog}:2:" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8").startswith("digraph")


def test_render_without_dot_binary(lesson_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    out = tmp_path / "lesson.svg"
    assert main(["render", str(lesson_file), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Graphviz" in err and "apt-get install graphviz" in err
    assert not out.exists()
    # DOT needs no binary
    assert main(["render", str(lesson_file), "-o", str(tmp_path / "lesson.dot")]) == 0


def test_render_unknown_suffix_is_usage(lesson_file, tmp_path, capsys):
    assert main(["render", str(lesson_file), "-o", str(tmp_path / "lesson.jpg")]) == 2
    assert ".svg" in capsys.readouterr().err


def test_render_missing_program_is_usage(tmp_path, capsys):
    assert main(["render", str(tmp_path / "nope.py"), "-o", str(tmp_path / "x.svg")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_render_unwritable_output_is_usage(lesson_file, tmp_path, capsys):
    out = tmp_path / "no" / "such" / "dir" / "x.dot"
    assert main(["render", str(lesson_file), "-o", str(out)]) == 2
    assert "cannot write" in capsys.readouterr().err


EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize(("name", "target"), [("tutorial_net", "loss"), ("sequential_mlp", "loss")])
def test_examples_run_from_the_command_line(name, target, capsys):
    code = main(["run", str(EXAMPLES / f"{name}.py"), "--json", "--backward", target])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["error"] is None
    grads = {t["name"]: t["grad"] for t in data["tensors"]}
    assert target in grads
    assert ("net.fc1.weight" if name == "tutorial_net" else "net.0.weight") in grads


def test_render_call_picks_a_training_loops_backward_call(tmp_path, capsys):
    """--call K draws backward call K's graph (default: the last; 'all': the whole run)."""
    program = write(tmp_path, PRESETS_BY_KEY["sgd_no_zero_grad"].source)
    drawn = {}
    for call in (None, "1", "3", "all"):
        out = tmp_path / f"call-{call}.dot"
        extra = [] if call is None else ["--call", call]
        assert main(["render", str(program), "-o", str(out), *extra]) == 0
        drawn[call] = out.read_text(encoding="utf-8")
        err = capsys.readouterr().err
        if call in (None, "3"):
            assert "drawing backward call 3 of 3 (line 9, iteration 2)" in err
    assert drawn[None] == drawn["3"]
    assert "-11.3949" in drawn["3"] and "-4.7832" not in drawn["3"]
    assert "-4.7832" in drawn["1"] and "-11.3949" not in drawn["1"]  # .grad after call 1
    assert "loss[0]" in drawn["all"] and "loss[2]" in drawn["all"]
    assert "loss[0]" not in drawn["1"]
    for bad in ("7", "first"):
        assert main(["render", str(program), "-o", str(tmp_path / "x.dot"), "--call", bad]) == 2
        assert "--call" in capsys.readouterr().err


def test_render_call_of_a_program_with_one_backward(lesson_file, tmp_path, capsys):
    out = tmp_path / "one.dot"
    assert main(["render", str(lesson_file), "-o", str(out), "--backward", "y", "--call", "1"]) == 0
    assert "drawing backward call 1 of 1" in capsys.readouterr().err
    whole = tmp_path / "whole.dot"
    assert main(["render", str(lesson_file), "-o", str(whole), "--backward", "y"]) == 0
    assert out.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8")


NESTED = """class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x)

torch.manual_seed(0)
deep = Deep()
small = torch.ones(2, 4, requires_grad=True)
big = torch.ones(2, 4, requires_grad=True)
loss = (deep(small * 0.001 + big * 1000)).sum()
"""


def cluster_labels(dot: str) -> list[str]:
    return sorted(
        line.split('label="')[1].split('"')[0]
        for line in dot.splitlines()
        if 'style="rounded,dashed"' in line
    )


def test_render_module_depth(tmp_path, capsys):
    prog = write(tmp_path, "import torch.nn as nn\n" + NESTED)
    out = tmp_path / "g.dot"
    assert main(["render", str(prog), "-o", str(out), "--backward", "loss"]) == 0
    deep = cluster_labels(out.read_text(encoding="utf-8"))
    assert [label.split(" (")[0] for label in deep] == [
        "deep.block.fc: Linear",
        "deep.block: Block",
        "deep: Deep",
    ]
    assert main(["render", str(prog), "-o", str(out), "--module-depth", "1"]) == 0
    assert [label.split(" (")[0] for label in cluster_labels(out.read_text())] == ["deep: Deep"]
    assert main(["render", str(prog), "-o", str(out), "--module-depth", "0"]) == 0
    assert cluster_labels(out.read_text()) == []
    with pytest.raises(SystemExit) as usage:
        main(["render", str(prog), "-o", str(out), "--module-depth", "-1"])
    assert usage.value.code == 2 and "0 or more, not '-1'" in capsys.readouterr().err


def test_render_color_by_gradient_and_by_device(tmp_path, capsys):
    prog = write(tmp_path, "import torch.nn as nn\n" + NESTED)
    out = tmp_path / "g.dot"
    args = ["render", str(prog), "-o", str(out), "--backward", "loss"]
    assert main([*args, "--color", "grad"]) == 0
    text = out.read_text(encoding="utf-8")
    assert re.search(r"fill: mean \|grad\|, light \S+ to red \S+ \(log scale\)", text)
    shade = {
        name: GRAD_RAMP.index(
            re.search(rf"label=\"\{{{name} =[^\n]*fillcolor=\"([^\"]+)\"", text).group(1)
        )
        for name in ("small", "big")
    }
    assert shade["small"] < shade["big"]  # its gradient is a million times smaller
    assert main(args) == 0
    role = out.read_text(encoding="utf-8")
    assert "mean |grad|" not in role and "cluster_devices" not in role
    assert main([*args, "--color", "device"]) == 0
    assert '"legend_device_cpu"' in out.read_text(encoding="utf-8").split("cluster_devices")[1]
    with pytest.raises(SystemExit):
        main([*args, "--color", "blue"])
    assert "invalid choice: 'blue'" in capsys.readouterr().err
