"""gradviz.util.reference: the one loader of the GPU reference files, and the typed-field check
their formats use. Each format's own checks are tested with it (tests/unit/speed/test_timing.py for
the Speed page's file); the Devices page's copy costs are checked here."""

from __future__ import annotations

import json

import pytest

from gradviz.devices.transfer_reference import REFERENCE_FORMAT as TRANSFER_FORMAT
from gradviz.util.reference import (
    ReferenceFileError,
    ReferenceFormat,
    load_reference,
    require_field,
)

SEEN: list[tuple[dict, str]] = []


def _parse(data: dict, name: str) -> tuple[dict, str]:
    SEEN.append((data, name))
    return data, name


SCHEMA = ReferenceFormat(_parse, "test.reference/1")
NO_SCHEMA = ReferenceFormat(_parse)


def _write(tmp_path, text: str | bytes):
    path = tmp_path / "ref.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_a_missing_file_is_none_and_is_not_parsed(tmp_path):
    SEEN.clear()
    assert load_reference(tmp_path / "absent.json", SCHEMA) is None
    assert load_reference(str(tmp_path / "absent.json"), NO_SCHEMA) is None
    assert SEEN == []


def test_a_good_file_is_parsed_with_its_name(tmp_path):
    path = _write(tmp_path, '{"schema": "test.reference/1", "x": 1}')
    assert load_reference(path, SCHEMA) == ({"schema": "test.reference/1", "x": 1}, "ref.json")
    assert load_reference(_write(tmp_path, '{"x": 2}'), NO_SCHEMA) == ({"x": 2}, "ref.json")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"^ref\.json is not readable JSON: Expecting property name"),
        ("", r"^ref\.json is not readable JSON"),
        (b'{"a": "\xff"}', r"^ref\.json is not readable JSON: 'utf-8' codec"),
        ("[1, 2]", r"^ref\.json: top level should be an object$"),
        ('"a string"', r"^ref\.json: top level should be an object$"),
        ("{}", r"^ref\.json: schema should be 'test\.reference/1', got None$"),
        ('{"schema": "other/2"}', r"schema should be 'test\.reference/1', got 'other/2'$"),
    ],
)
def test_bad_files_are_refused_with_the_file_and_the_problem(tmp_path, text, message):
    SEEN.clear()
    with pytest.raises(ReferenceFileError, match=message):
        load_reference(_write(tmp_path, text), SCHEMA)
    assert SEEN == []  # the format's own checks never see a file the loader refused


def test_a_folder_in_place_of_the_file_is_refused(tmp_path):
    (tmp_path / "ref.json").mkdir()
    with pytest.raises(ReferenceFileError, match="not readable JSON"):
        load_reference(tmp_path / "ref.json", NO_SCHEMA)


def test_the_formats_own_errors_come_through(tmp_path):
    def refuse(data: dict, name: str):
        raise ReferenceFileError(f"{name}: no thanks")

    with pytest.raises(ReferenceFileError, match=r"^ref\.json: no thanks$"):
        load_reference(_write(tmp_path, "{}"), ReferenceFormat(refuse))


@pytest.mark.parametrize(
    ("obj", "kind", "result"),
    [
        ({"f": "GPU"}, str, "GPU"),
        ({"f": 3}, int, 3),
        ({"f": 3}, float, 3.0),
        ({"f": 0.5}, float, 0.5),
    ],
)
def test_require_field_returns_good_values(obj, kind, result):
    value = require_field(obj, "f", kind, "where")
    assert value == result and type(value) is kind


@pytest.mark.parametrize(
    ("obj", "kind", "message"),
    [
        ({}, str, r"^where: missing field 'f'$"),
        ({"f": None}, str, "should be str, got NoneType"),
        ({"f": "  "}, str, "'f' is empty"),
        ({"f": 1.5}, int, "'f' should be int, got float"),
        ({"f": True}, int, "should be int, got bool"),
        ({"f": True}, float, "should be float, got bool"),
        ({"f": "1"}, float, "should be float, got str"),
        ({"f": -1}, float, "finite number >= 0"),
        ({"f": float("nan")}, float, "finite number >= 0"),
        ({"f": float("inf")}, float, "finite number >= 0"),
        ({"f": 10**400}, float, "finite number >= 0"),
    ],
)
def test_require_field_names_the_problem(obj, kind, message):
    with pytest.raises(ReferenceFileError, match=message):
        require_field(obj, "f", kind, "where")


def test_require_field_may_allow_null():
    assert require_field({"f": None}, "f", float, "where", nullable=True) is None
    with pytest.raises(ReferenceFileError, match="missing field 'f'"):
        require_field({}, "f", float, "where", nullable=True)


# --- the Devices page's file (gradviz.devices.transfer_reference) ---------------------------

RECORDED = {
    "device": "cuda:0",
    "device_name": "NVIDIA H100 80GB HBM3",
    "torch": "2.5.0",
    "measured_on": "2026-01-01 00:00 UTC",
    "measurements": [
        {"key": "h2d_pinned", "what": "host → cuda:0, pinned", "device": "cuda:0",
         "seconds": 0.001, "nbytes": 16777216, "note": "", "gb_per_s": 16.8},
        {"key": "pinned", "what": "pinned memory", "device": "cpu", "seconds": None,
         "nbytes": None, "note": "needs CUDA", "gb_per_s": None},
    ],
}  # fmt: skip


def test_recorded_copy_costs_load_as_written(tmp_path):
    path = _write(tmp_path, json.dumps(RECORDED))
    assert load_reference(path, TRANSFER_FORMAT) == RECORDED


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("device_name"), r"^ref\.json: missing field 'device_name'$"),
        (lambda d: d.update(measurements=[]), "'measurements' should be a non-empty list"),
        (lambda d: d.update(measurements={"a": 1}), "'measurements' should be a non-empty list"),
        (lambda d: d["measurements"].append(3), r"measurements\[2\]: should be an object"),
        (lambda d: d["measurements"][0].pop("what"), r"measurements\[0\]: missing field 'what'"),
        (lambda d: d["measurements"][1].update(seconds="slow"), "'seconds' should be float"),
        (lambda d: d["measurements"][0].update(gb_per_s="fast"), "'gb_per_s' should be float"),
        (lambda d: d["measurements"][0].update(note=7), "'note' should be str"),
    ],
)
def test_recorded_copy_costs_are_checked(tmp_path, mutate, message):
    data = json.loads(json.dumps(RECORDED))
    mutate(data)
    with pytest.raises(ReferenceFileError, match=message):
        load_reference(_write(tmp_path, json.dumps(data)), TRANSFER_FORMAT)
