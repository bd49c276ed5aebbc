"""gradviz.program.results.reports: a run's error, warnings, device moves and figures as frozen
dataclasses. They cross from a worker to the torch-free server pickled inside a Trace, and
the command line's JSON (Trace.to_json, README) writes them as the same objects as before
they were typed: keys, values and key order."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from gradviz.cli.run import format_error, json_safe
from gradviz.devices.info import CudaMemory
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.reports import (
    DeviceErrorDetails,
    DeviceMove,
    ErrorDetails,
    RunError,
    RunStats,
    RunWarning,
)
from gradviz.program.results.trace import MAX_RESULT_BYTES, RunOptions, Trace, cap_result
from gradviz.program.syntax.program_error import ProgramError
from gradviz.services.programs import describe
from gradviz.workers.pool import Outcome

SRC = Path(__file__).resolve().parents[3] / "src"

DEVICE_ERROR = RunError(
    "runtime",
    "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!",
    3,
    6,
    "the rule",
    ErrorDetails(
        exception="FakeTensorDeviceMismatchError",
        operation="*",
        explanation="device_mismatch",
        title="Tensors on different devices (GPU and CPU)",
        fix="`w = w.to(x.device)`",
        device=DeviceErrorDetails(
            kind="device_mismatch",
            rule="the rule",
            devices=("cpu", "cuda:0"),
            tensors=(("w", "cpu"), ("x", "cuda:0")),
            move="w",
            fix_code="w = w.to(x.device)",
            source="simulated: raised by PyTorch's FakeTensorMode on this CPU-only host",
        ),
    ),
)


def _every_kind() -> Trace:
    return Trace(
        source="w = torch.ones(3)\n",
        error=DEVICE_ERROR,
        warnings=[RunWarning(2, "a warning", "UserWarning")],
        moves=[DeviceMove("x", 2, "cpu", "cuda:0")],
        memory=[CudaMemory("cuda:0", 512, 2_097_152, 600_000_000, 80_000_000_000)],
        stats=RunStats(1.5, 3, 3, 48, 12.0, 1234, None),
    )


# ---------------------------------------------------------------- plain, frozen, picklable


@pytest.mark.parametrize(
    "value",
    [
        DEVICE_ERROR,
        DEVICE_ERROR.details,
        DEVICE_ERROR.details.device,
        RunError("name", "`y` is not defined", 1, 1),
        RunWarning(3, "careful", "UserWarning"),
        DeviceMove("x", 2, "cpu", "cuda:1"),
        RunStats(seconds=0.5, worker="timeout"),
        CudaMemory("cuda:0", 0, 0, 1, 2),
    ],
    ids=lambda v: type(v).__name__,
)
def test_each_type_survives_pickling_and_is_frozen(value):
    again = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    assert again == value and type(again) is type(value)
    field = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, None)


def test_a_trace_with_every_type_survives_pickling():
    trace = _every_kind()
    again = pickle.loads(pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL))
    assert again == trace
    assert again.error.details.device.tensors == (("w", "cpu"), ("x", "cuda:0"))
    assert again.moves[0].to_device == "cuda:0" and again.memory[0].reserved == 2_097_152


def test_the_server_unpickles_a_trace_without_torch():
    """What a worker sends is read by a process that has never imported torch."""
    data = pickle.dumps(_every_kind(), protocol=pickle.HIGHEST_PROTOCOL)
    code = (
        "import pickle, sys\n"
        "trace = pickle.loads(sys.stdin.buffer.read())\n"
        "assert trace.error.details.device.move == 'w', trace.error\n"
        "assert trace.warnings[0].line == 2 and trace.moves[0].name == 'x'\n"
        "heavy = [m for m in ('torch', 'numpy') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run(
        [sys.executable, "-c", code], input=data, capture_output=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr.decode()[-2000:]


def test_the_interpreter_gives_the_types():
    source = "w = torch.ones(3, requires_grad=True)\nx = torch.ones(3)\ny = (w * x).sum()\n"
    trace = run_program(
        source, RunOptions(simulate_cuda=True, device_overrides={"x": "cuda:0"}, classic=False)
    )
    assert trace.moves == [DeviceMove("x", 2, "cpu", "cuda:0")]
    assert isinstance(trace.error, RunError) and isinstance(trace.stats, RunStats)
    assert (trace.error.line, trace.error.col) == (3, 6)
    assert trace.error.details.device.move == "w"
    assert dict(trace.error.details.device.tensors) == {"w": "cpu", "x": "cuda:0"}
    assert trace.stats.operations > 0 and trace.stats.worker is None
    warned = run_program("x = torch.ones(3, requires_grad=True)\ny = x * 2\nz = y.grad\n")
    assert [(w.line, w.category) for w in warned.warnings] == [(3, "UserWarning")]


# ---------------------------------------------------------------- the command line's JSON


def test_to_json_writes_an_error_as_it_always_has():
    data = Trace(source="", error=DEVICE_ERROR).to_json()
    assert data["error"] == {
        "kind": "runtime",
        "message": DEVICE_ERROR.message,
        "line": 3,
        "col": 6,
        "hint": "the rule",
        "details": {
            "exception": "FakeTensorDeviceMismatchError",
            "operation": "*",
            "explanation": "device_mismatch",
            "title": "Tensors on different devices (GPU and CPU)",
            "fix": "`w = w.to(x.device)`",
            "device_kind": "device_mismatch",
            "device_rule": "the rule",
            "devices": ["cpu", "cuda:0"],
            "device_tensors": {"w": "cpu", "x": "cuda:0"},
            "move": "w",
            "fix_code": "w = w.to(x.device)",
            "device_source": "simulated: raised by PyTorch's FakeTensorMode on this CPU-only host",
        },
    }
    # the order of the keys is the JSON's too
    assert list(data["error"]) == ["kind", "message", "line", "col", "hint", "details"]
    assert list(data["error"]["details"])[:5] == [
        "exception",
        "operation",
        "explanation",
        "title",
        "fix",
    ]


def test_a_device_error_without_explanation_keeps_its_order():
    """Without a plain-words explanation the device's title and fix come after its parts."""
    details = dataclasses.replace(DEVICE_ERROR.details, explanation=None).to_dict()
    assert list(details) == [
        "exception",
        "operation",
        "device_kind",
        "device_rule",
        "devices",
        "device_tensors",
        "move",
        "fix_code",
        "title",
        "fix",
        "device_source",
    ]


def test_to_json_writes_a_warning_and_no_move():
    trace = Trace(
        source="",
        warnings=[RunWarning(3, "not a leaf", "UserWarning")],
        moves=[DeviceMove("x", 2, "cpu", "cuda:0")],
        stats=RunStats(seconds=0.1),
    )
    assert trace.to_json() == {
        "tensors": [],
        "error": None,
        "backward": None,
        "stdout": [],
        "shown": [],
        "warnings": [{"line": 3, "message": "not a leaf", "category": "UserWarning"}],
    }


def test_the_cli_json_of_a_run_is_byte_for_byte_the_same():
    trace = run_program("y = ones\n")
    text = json.dumps(json_safe(trace.to_json()), indent=2, default=str, allow_nan=False)
    assert text == (
        "{\n"
        '  "tensors": [],\n'
        '  "error": {\n'
        '    "kind": "name",\n'
        '    "message": "`ones` is not defined",\n'
        '    "line": 1,\n'
        '    "col": 5,\n'
        '    "hint": "Did you mean `torch.ones`?",\n'
        '    "details": {}\n'
        "  },\n"
        '  "backward": null,\n'
        '  "stdout": [],\n'
        '  "shown": [],\n'
        '  "warnings": []\n'
        "}"
    )
    assert format_error("p.py", trace.error) == (
        "p.py:1:5: name: `ones` is not defined\n  hint: Did you mean `torch.ones`?"
    )


def test_a_program_error_reports_itself():
    exc = ProgramError("limit", "too big", 2, 4, "smaller", ErrorDetails(operation="+"))
    assert exc.report() == RunError(
        "limit", "too big", 2, 4, "smaller", ErrorDetails(operation="+")
    )


def test_fallbacks_for_a_worker_that_did_not_finish():
    killed = describe(Outcome("died", None, "SIGKILL"), 10.0, 300_000_000).report()
    assert killed.details.worker == "SIGKILL" and killed.line is None
    assert killed.to_dict()["details"] == {"worker": "SIGKILL"}
    failed = describe(Outcome("error", message="boom"), 10.0, 300_000_000).report()
    assert failed.to_dict() == {
        "kind": "internal",
        "message": "the program runner failed: boom",
        "line": None,
        "col": None,
        "hint": None,
        "details": {},
    }


def test_cap_result_records_its_size_and_refuses_as_a_run_error():
    trace = cap_result(Trace(source="a = 1", stats=RunStats(seconds=0.25, operations=1)))
    assert trace.stats.result_bytes and trace.stats.result_bytes <= MAX_RESULT_BYTES
    assert trace.stats.seconds == 0.25 and trace.stats.operations == 1
    huge = Trace(source="a = 1", stdout=["x" * (MAX_RESULT_BYTES + 1)])
    refused = cap_result(huge)
    assert refused.error.kind == "limit" and refused.error.details == ErrorDetails()
    assert refused.to_json()["error"]["details"] == {}
    assert refused.stats.result_bytes <= MAX_RESULT_BYTES
