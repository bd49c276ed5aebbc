"""util.settings: the one table of GRADVIZ_* variables and the public/local profile. No other
module reads a GRADVIZ_* variable, every name the code mentions is in the table, a value set
wrong is refused by name, and the defaults and public limits are the ones the app had."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gradviz.training.settings import MAX_CHECKPOINT_BYTES, MEGABYTE
from gradviz.util import settings
from gradviz.util.settings import LOCAL, PUBLIC, SETTINGS, SettingError
from gradviz.workers.pool import SandboxLimits

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src" / "gradviz"
HOME = SRC / "util" / "settings.py"
NAME = re.compile(r"\bGRADVIZ_[A-Z0-9]+(?:_[A-Z0-9]+)*\b")


def _sources() -> list[Path]:
    return [*sorted(SRC.rglob("*.py")), ROOT / "app.py"]


def _names_a_setting(node: ast.AST | None) -> bool:
    """A key that is, or may be, a GRADVIZ_* name: a literal one, an f-string that builds one,
    or anything not a literal string (a variable, a call), which may hold one."""
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, str) or node.value.startswith("GRADVIZ_")
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        return not isinstance(first, ast.Constant) or str(first.value).startswith("GRADVIZ_")
    return True


def environment_reads(tree: ast.Module) -> list[int]:
    """Lines that read a GRADVIZ_* variable (or one whose name is not written out) from the
    environment: os.environ[...], .get, .pop, `in os.environ`, os.getenv, and a name bound to
    any of them (env = os.environ.get)."""

    def environ(node: ast.AST) -> bool:
        return bool(re.search(r"\b(environ|getenv)\b", ast.unparse(node)))

    def reader(func: ast.AST) -> bool:
        if isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault"):
            return environ(func.value)
        return getattr(func, "id", getattr(func, "attr", None)) == "getenv"

    aliases = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and environ(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if environ(node.value) and _names_a_setting(node.slice):
                out.append(node.lineno)
        elif isinstance(node, ast.Call) and node.args and _names_a_setting(node.args[0]):
            func = node.func
            if reader(func) or (isinstance(func, ast.Name) and func.id in aliases):
                out.append(node.lineno)
        elif isinstance(node, ast.Compare) and _names_a_setting(node.left):
            if any(isinstance(op, ast.In | ast.NotIn) for op in node.ops) and any(
                environ(c) for c in node.comparators
            ):
                out.append(node.lineno)
    return out


@pytest.mark.parametrize(
    "line",
    [
        'os.environ["GRADVIZ_X"]',
        'os.environ.get("GRADVIZ_X", "1")',
        'os.getenv("GRADVIZ_X")',
        '(os.environ if env is None else env).get("GRADVIZ_X", "")',
        'env = os.environ.get\nenv("GRADVIZ_X", 1)',
        'os.environ.get(f"GRADVIZ_{name.upper()}_JOBS", "1")',
        '"GRADVIZ_X" in os.environ',
        "os.environ.get(name, default)",  # a name held in a variable
        'size = int(os.environ.get(env, "1"))',
    ],
)
def test_the_scan_finds_a_read(line):
    assert environment_reads(ast.parse(line))


def test_the_scan_leaves_writes_and_messages_alone():
    text = (
        'env["GRADVIZ_PUBLIC"] = "1"\nprint("GRADVIZ_PUBLIC=1: public")\nsettings.get("GRADVIZ_X")\n'
        'os.environ.get("PYTHONPATH", "")\n{**os.environ, "GVBINDIR": home}\n'
        "os.environ.update(extra)\nsettings.get(name)"
    )
    assert environment_reads(ast.parse(text)) == []


def test_no_module_but_settings_reads_a_gradviz_variable():
    found = []
    for path in _sources():
        if path == HOME:
            continue
        lines = environment_reads(ast.parse(path.read_text(), str(path)))
        found += [f"{path.relative_to(ROOT)}:{n}" for n in lines]
    assert not found, f"read GRADVIZ_* through gradviz.util.settings instead: {found}"


def test_every_gradviz_name_in_the_code_and_readme_is_in_the_table():
    where = [*_sources(), ROOT / "README.md"]
    mentioned = {name: path for path in where for name in NAME.findall(path.read_text())}
    missing = {n: str(p.relative_to(ROOT)) for n, p in mentioned.items() if n not in SETTINGS}
    assert not missing, f"add these to util.settings.SETTINGS: {missing}"


def test_every_entry_has_a_name_a_parser_and_one_line_of_doc():
    for name, s in SETTINGS.items():
        assert name == s.name and NAME.fullmatch(name), name
        assert s.doc.endswith(".") and "\n" not in s.doc and len(s.doc) < 160, name
        assert s.parser.expects, name
    assert len(SETTINGS) == 22


def test_defaults_are_the_ones_the_app_had(monkeypatch):
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    assert settings.get("GRADVIZ_PUBLIC") is None and not settings.public_host()
    assert settings.flag("GRADVIZ_SANDBOX") and settings.flag("GRADVIZ_LANDING")
    assert not settings.flag("GRADVIZ_TRUST_NETWORK")
    assert settings.items("GRADVIZ_ALLOWED_HOSTS") == settings.items("GRADVIZ_DATA_ROOTS") == ()
    assert settings.text("GRADVIZ_CACHE") == ""
    assert settings.integer("GRADVIZ_WORKERS") == SandboxLimits.workers == 1
    assert settings.number("GRADVIZ_RUN_SECONDS") == SandboxLimits.run_seconds == 20.0
    assert settings.integer("GRADVIZ_WORKER_MEMORY") == SandboxLimits.memory_bytes
    assert LOCAL.result_memory == SandboxLimits.decoded_bytes
    assert LOCAL.upload_bytes == MAX_CHECKPOINT_BYTES
    assert settings.integer("GRADVIZ_PROXY_HOPS") == 0
    for slot in ("TRAINING", "SPEED", "HEAVY", "SLIDES", "WEIGHTS"):
        assert settings.integer(f"GRADVIZ_{slot}_JOBS") == 1
    assert settings.number("GRADVIZ_TRAINING_SECONDS") == 600.0
    assert settings.number("GRADVIZ_SPEED_SECONDS") == 600.0
    assert settings.integer("GRADVIZ_TRAINING_MEMORY") == 1_500_000_000
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    assert settings.profile() is PUBLIC
    assert settings.integer("GRADVIZ_WORKER_MEMORY") == 300_000_000
    assert settings.integer("GRADVIZ_TRAINING_MEMORY") == 400_000_000
    assert settings.integer("GRADVIZ_PROXY_HOPS") == 1
    assert settings.number("GRADVIZ_VISITOR_SECONDS") == 40.0
    assert settings.integer("GRADVIZ_PUBLIC_MAX_BATCH") == 128
    assert settings.integer("GRADVIZ_PUBLIC_TIMING_MEMORY") == 200_000_000


def test_the_profile_keeps_the_limits_the_app_had():
    mib = 1024 * 1024
    assert (
        settings.Profile(
            upload_bytes=32 * MEGABYTE,
            uploads_held_bytes=128 * MEGABYTE,
            max_batch=8192,
            training_memory=1_500_000_000,
            timing_memory=None,
            worker_memory=900_000_000,
            result_memory=48_000_000,
            decoded_bytes=32_000_000,
            visitor_seconds=None,
            results_bytes=64 * mib,
            session_results_bytes=256 * mib,
            drawings_bytes=128 * mib,
            gif_memory=512 * mib,
            slide_steps=60,
            proxy_hops=0,
            heavy_share_slot=False,
        )
        == LOCAL
    )
    assert (
        settings.Profile(
            upload_bytes=20 * MEGABYTE,
            uploads_held_bytes=40 * MEGABYTE,
            max_batch=128,
            training_memory=400_000_000,
            timing_memory=200_000_000,
            worker_memory=300_000_000,
            result_memory=16_000_000,
            decoded_bytes=12_000_000,
            visitor_seconds=40.0,
            results_bytes=24 * mib,
            session_results_bytes=48 * mib,
            drawings_bytes=32 * mib,
            gif_memory=256 * mib,
            slide_steps=25,
            proxy_hops=1,
            heavy_share_slot=True,
        )
        == PUBLIC
    )


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("GRADVIZ_PUBLIC", " YES ", True),
        ("GRADVIZ_SANDBOX", "off", False),
        ("GRADVIZ_LANDING", "0", False),
        ("GRADVIZ_WORKERS", "3", 3),
        ("GRADVIZ_PROXY_HOPS", "0", 0),
        ("GRADVIZ_RUN_SECONDS", "0.25", 0.25),
        ("GRADVIZ_TRAINING_MEMORY", "5e8", 500_000_000),
        ("GRADVIZ_VISITOR_SECONDS", "0", 0.0),
        ("GRADVIZ_ALLOWED_HOSTS", " lab-pc, ,other ", ("lab-pc", "other")),
        ("GRADVIZ_CACHE", "/srv/cache", "/srv/cache"),
    ],
)
def test_a_good_value_is_read_at_each_call(monkeypatch, name, text, value):
    monkeypatch.setenv(name, text)
    assert settings.get(name) == value
    monkeypatch.setenv(name, "")  # empty is unset
    assert settings.get(name) == settings.default(name)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("GRADVIZ_PUBLIC", "maybe"),
        ("GRADVIZ_SANDBOX", "of"),
        ("GRADVIZ_WORKERS", "two"),
        ("GRADVIZ_WORKERS", "0"),
        ("GRADVIZ_PROXY_HOPS", "-1"),
        ("GRADVIZ_RUN_SECONDS", "nan"),
        ("GRADVIZ_TRAINING_SECONDS", "-5"),
        ("GRADVIZ_TRAINING_MEMORY", "lots"),
        ("GRADVIZ_PUBLIC_TIMING_MEMORY", "inf"),
        ("GRADVIZ_VISITOR_SECONDS", "-1"),
    ],
)
def test_a_bad_value_is_refused_by_name(monkeypatch, name, text):
    monkeypatch.setenv(name, text)
    with pytest.raises(SettingError, match=f"^{name}='{re.escape(text)}' is not valid: it should"):
        settings.get(name)
    assert settings.problems() == [settings.problems()[0]]
    assert settings.problems()[0].startswith(f"{name}=")


def test_an_explicit_mapping_is_read_instead_of_the_environment(monkeypatch):
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    assert settings.profile({"GRADVIZ_PUBLIC": "0"}) is LOCAL
    assert settings.problems({"GRADVIZ_WORKERS": "x", "GRADVIZ_CACHE": "/c"}) == [
        "GRADVIZ_WORKERS='x' is not valid: it should be a whole number, at least 1 "
        "(Warm workers that run visitors' programs)"
    ]


def test_a_typed_accessor_refuses_the_wrong_kind():
    with pytest.raises(TypeError, match="GRADVIZ_CACHE"):
        settings.integer("GRADVIZ_CACHE")
    with pytest.raises(KeyError):
        settings.get("GRADVIZ_NOT_A_SETTING")


def test_the_command_line_names_a_bad_setting_and_runs_nothing(monkeypatch, capsys):
    from gradviz.cli.main import main

    monkeypatch.setenv("GRADVIZ_WORKERS", "two")
    assert main(["run", "--help"]) == 2
    assert "error: GRADVIZ_WORKERS='two' is not valid" in capsys.readouterr().err


def test_the_app_names_a_bad_setting_and_shows_no_page(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("GRADVIZ_TRAINING_MEMORY", "lots")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert "GRADVIZ_TRAINING_MEMORY='lots' is not valid" in at.error[0].value
    assert not at.button and not at.text_area  # no page ran
