"""The CLI's two paths: by default a program runs in a sandboxed worker and the CLI's own
process never imports torch (the worker does; that keeps `render` near a plain torch script's
cost); `--no-sandbox` runs it in the CLI's process (trusted files only)."""

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradviz.cli import main as cli_main
from gradviz.cli.main import COMMAND_MODULES, command_modules

ROOT = Path(__file__).resolve().parents[3]
LESSON = ROOT / "examples" / "lesson.py"


def test_only_the_named_commands_module_is_imported():
    assert command_modules(["render", "x.py", "-o", "g.svg"]) == ["gradviz.cli.render"]
    assert command_modules(["run", "x.py"]) == ["gradviz.cli.run"]
    assert command_modules(["--help"]) == COMMAND_MODULES
    assert command_modules(["nonsense"]) == COMMAND_MODULES


CHECK = """
import sys
from gradviz.cli.main import main
status = main(sys.argv[1:])
print("torch imported:", "torch" in sys.modules, "status:", status)
"""


def cli(args: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GRADVIZ_SANDBOX"}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("command", ["render", "run"])
def test_the_default_path_runs_the_program_in_a_worker(command, tmp_path):
    out = tmp_path / "g.svg"
    extra = ["-o", str(out)] if command == "render" else []
    line = cli([command, str(LESSON), "--backward", "y", *extra])
    assert line == "torch imported: False status: 0"
    if command == "render":
        assert b"PowBackward0" in out.read_bytes()


def test_no_sandbox_runs_it_in_this_process(tmp_path):
    out = tmp_path / "g.svg"
    line = cli(["render", str(LESSON), "-o", str(out), "--backward", "y", "--no-sandbox"])
    assert line == "torch imported: True status: 0"
    assert b"PowBackward0" in out.read_bytes()


@pytest.mark.parametrize(
    ("argv", "started"),
    [
        (["render", "p.py", "-o", "g.svg"], True),
        (["run", "p.py", "--json"], True),
        (["render", "p.py", "-o", "g.svg", "--no-sandbox"], False),
        (["run", "--help"], False),
        (["speed", "--help"], False),
        ([], False),
    ],
)
def test_the_worker_starts_before_the_commands_modules_load(monkeypatch, argv, started):
    """`run` and `render` start the worker's forkserver first, so its torch import overlaps
    this process's own imports; not for --no-sandbox, help or other commands."""
    import gradviz.cli.main as cli_main
    from gradviz.workers.table import CLI_PRELOAD

    calls = []
    monkeypatch.delenv("GRADVIZ_SANDBOX", raising=False)
    monkeypatch.setattr(cli_main, "start_forkserver", calls.append)
    cli_main.start_worker_early(argv)
    assert calls == ([CLI_PRELOAD] if started else [])
    monkeypatch.setenv("GRADVIZ_SANDBOX", "off")
    cli_main.start_worker_early(argv)
    assert len(calls) == started


STOP = """
import inspect
import os
from gradviz.workers.process import forkserver_pid, start_forkserver, stop_forkserver
stop_forkserver()  # none started: nothing to do
start_forkserver(("gradviz.workers.table",))
pid = forkserver_pid()
alive = os.path.exists(f"/proc/{pid}")
stop_forkserver()
print(alive, os.path.exists(f"/proc/{pid}"))
"""


def test_the_cli_ends_its_forkserver_as_it_exits():
    """python -m gradviz kills the forkserver run/render started (stop_forkserver), instead
    of leaving a Python with torch to shut itself down (0.2 to 0.9 s, holding the output
    pipes open) after the command has finished."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        [sys.executable, "-c", STOP], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]
    console = inspect.getsource(cli_main.console)
    assert console.index("main()") < console.index("stop_forkserver()") < console.index("sys.exit")
    assert "console()" in (ROOT / "src" / "gradviz" / "__main__.py").read_text(encoding="utf-8")
