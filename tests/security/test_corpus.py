"""Every hostile program is refused with a clear message and leaves no trace.

"No trace" is checked for real: each program runs with a fresh empty working directory
(no file may appear there or in the repository), no child process may appear, and
torch's process-wide state (default dtype and device, threads, grad mode, deterministic
mode, the global RNG) must be exactly as before.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from gradviz.program.worker_hooks import state as torch_state
from gradviz.services.programs import run_isolated
from tests.security.corpus import (
    COUNTED,
    GENERATORS,
    GREW,
    HARMLESS,
    HOSTILE,
    IMPORTS_AND_DRAWS,
    NUMPY,
    OWN_NAMES_AND_FUNCTIONAL,
    PLAIN_CLASSES,
    SANDBOX_ONLY,
    TRY_EXCEPT,
)

ROOT = Path(__file__).resolve().parents[2]
KINDS = {"syntax", "forbidden", "name", "limit", "type", "runtime"}


def _children() -> set[int]:
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            found |= {int(p) for p in (task / "children").read_text().split()}
    return found


def _tree(path: Path) -> set[str]:
    """Every file and folder under `path` but .git, relative to it (os.walk: a scan of the
    repository with its virtual environment is about 50,000 entries, and os.walk reads them
    four times as fast as Path.rglob, twice for each of the corpus's hundreds of programs)."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".git"]
        where = os.path.relpath(folder, path)
        found.update(os.path.normpath(os.path.join(where, n)) for n in dirs + files if n != ".git")
    return found


@pytest.fixture
def sealed(tmp_path, monkeypatch):
    """Run in an empty cwd; afterwards nothing new on disk, no new process, same torch."""
    monkeypatch.chdir(tmp_path)
    state, children = torch_state(), _children()
    repo = {p for p in _tree(ROOT) if "__pycache__" not in p and ".pytest_cache" not in p}
    yield
    assert list(tmp_path.iterdir()) == [], "a file appeared in the working directory"
    now = {p for p in _tree(ROOT) if "__pycache__" not in p and ".pytest_cache" not in p}
    assert now - repo == set(), f"files appeared in the repository: {now - repo}"
    assert _children() - children == set(), "a process was started"
    assert torch_state() == state, "torch global state changed"
    assert torch.get_default_dtype() == torch.float32
    assert str(torch.get_default_device()) == "cpu"


def _assert_clear(err: dict | None, kind: str, words: str) -> None:
    assert err is not None, "the program was not refused"
    assert err.kind in KINDS, err
    assert err.kind == kind, err
    message = err.message
    assert words.lower() in message.lower(), message
    assert 10 <= len(message) <= 400, message
    ours = ("Interpreter.", "Evaluator.", "Library.", "Budget.", "Placement.", "RunState.")
    for leak in ("Traceback", 'File "', *ours, "BackwardWatch.", "gradviz/"):
        assert leak not in message, message


def test_corpus_is_big_enough():
    assert len(HOSTILE) >= 60
    assert len({h[0] for h in HOSTILE}) == len(HOSTILE)


@pytest.mark.parametrize(("source", "kind", "words"), [h[1:] for h in HOSTILE],
                         ids=[h[0] for h in HOSTILE])  # fmt: skip
def test_hostile_program_is_refused_in_process(source, kind, words, sealed):
    trace = run_program(source, RunOptions(backward="x"))
    _assert_clear(trace.error, kind, words)


@pytest.mark.parametrize(("source", "kind"), [h[1:3] for h in TRY_EXCEPT],
                         ids=[h[0] for h in TRY_EXCEPT])  # fmt: skip
def test_try_never_catches_a_cap_or_a_refusal(source, kind):
    """What a `try` may not catch stops the run at its line and column, printing nothing
    after it."""
    trace = run_program(source, RunOptions())
    assert trace.error is not None and trace.error.kind == kind, trace.error
    assert trace.error.line and trace.error.col, trace.error
    assert trace.stdout == []


@pytest.mark.parametrize(("source", "kind", "words", "where"), [g[1:] for g in GREW],
                         ids=[g[0] for g in GREW])  # fmt: skip
def test_grown_surface_is_refused_at_its_position(source, kind, words, where, sealed):
    trace = run_program(source, RunOptions(backward="x"))
    _assert_clear(trace.error, kind, words)
    assert (trace.error.line, trace.error.col) == where, trace.error


@pytest.mark.parametrize(("source", "kind", "words", "where"), [g[1:] for g in GENERATORS],
                         ids=[g[0] for g in GENERATORS])  # fmt: skip
def test_generator_refusals_at_their_position(source, kind, words, where, sealed):
    """Generators: refused, or stopped by a cap, at the line and column of the cause."""
    trace = run_program(source, RunOptions(backward="x"))
    _assert_clear(trace.error, kind, words)
    assert (trace.error.line, trace.error.col) == where, trace.error


@pytest.mark.parametrize(("source", "kind", "words", "where"),
                         [c[1:] for c in OWN_NAMES_AND_FUNCTIONAL],
                         ids=[c[0] for c in OWN_NAMES_AND_FUNCTIONAL])  # fmt: skip
def test_own_names_and_functional_refusals_at_their_position(source, kind, words, where, sealed):
    trace = run_program(source, RunOptions(backward="x"))
    _assert_clear(trace.error, kind, words)
    assert (trace.error.line, trace.error.col) == where, trace.error


@pytest.mark.parametrize(("source", "kind", "words", "where"), [c[1:] for c in PLAIN_CLASSES],
                         ids=[c[0] for c in PLAIN_CLASSES])  # fmt: skip
def test_plain_class_refusals_at_their_position(source, kind, words, where, sealed):
    trace = run_program(source, RunOptions(backward="x"))
    _assert_clear(trace.error, kind, words)
    assert (trace.error.line, trace.error.col) == where, trace.error


@pytest.mark.parametrize(("source", "kind", "words", "where"), [n[1:] for n in NUMPY],
                         ids=[n[0] for n in NUMPY])  # fmt: skip
def test_numpy_refusals_at_their_position(source, kind, words, where, sealed):
    """numpy's own random state is left alone too: a run draws from its own generator."""
    before = np.random.get_state()[1].tobytes()
    trace = run_program(source, RunOptions(backward="x"))
    _assert_clear(trace.error, kind, words)
    assert (trace.error.line, trace.error.col) == where, trace.error
    assert np.random.get_state()[1].tobytes() == before


@pytest.mark.parametrize(("source", "kind", "words", "where"), [n[1:] for n in IMPORTS_AND_DRAWS],
                         ids=[n[0] for n in IMPORTS_AND_DRAWS])  # fmt: skip
def test_import_and_generator_refusals_at_their_position(source, kind, words, where, sealed):
    """from-imports, numpy's Generator and np.linalg: numpy's own random state untouched."""
    before = np.random.get_state()[1].tobytes()
    trace = run_program(source, RunOptions(backward="x"))
    _assert_clear(trace.error, kind, words)
    assert (trace.error.line, trace.error.col) == where, trace.error
    assert np.random.get_state()[1].tobytes() == before


@pytest.mark.parametrize("source", [h[1] for h in HARMLESS], ids=[h[0] for h in HARMLESS])
def test_harmless_program_leaves_no_trace(source, sealed):
    trace = run_program(source)
    assert trace.error is None, trace.error


def test_corpus_through_the_workers(pool, sealed):
    """The same refusals from the workers, which stay alive and unchanged."""
    pids = set(pool.pids())
    start_state = pool.call("state", (), 10).value
    for name, source, kind, words in HOSTILE:
        trace = run_isolated(source, pool=pool)
        try:
            _assert_clear(trace.error, kind, words)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
    assert set(pool.pids()) == pids, "a worker died or was replaced"
    for _ in range(pool.limits.workers):
        assert pool.call("state", (), 10).value == start_state
    after = run_isolated("a = torch.ones(2) + 1\n", pool=pool)
    assert after.error is None and after.tensor("a").value == [2.0, 2.0]


@pytest.mark.parametrize("source", [s[1] for s in SANDBOX_ONLY], ids=[s[0] for s in SANDBOX_ONLY])
def test_work_past_the_caps_is_stopped_by_the_worker_limit(source, sealed):
    from gradviz.workers.pool import Pool, SandboxLimits

    with Pool(SandboxLimits(workers=1, run_seconds=3)) as p:
        trace = run_isolated(source, pool=p)
        _assert_clear(trace.error, "limit", "the limit per run")
        assert "nothing else was affected" in trace.error.message.lower()
        assert run_isolated("a = torch.ones(1)\n", pool=p).error is None


def test_no_file_written_even_if_a_program_tried(pool, tmp_path):
    """RLIMIT_FSIZE=0: even a write the language cannot express would fail in a worker."""
    out = pool.call("state", (), 10)
    assert out.status == "ok"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("source", "kind", "words", "where"), [c[1:] for c in COUNTED],
                         ids=[c[0] for c in COUNTED])  # fmt: skip
def test_objects_made_are_counted_before_they_are_made(source, kind, words, where, sealed):
    trace = run_program(source, RunOptions(backward="x"))
    _assert_clear(trace.error, kind, words)
    assert (trace.error.line, trace.error.col) == where, trace.error
