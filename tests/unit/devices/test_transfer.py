"""gradviz.devices.transfer: the measurements exist and are labelled; no assertions on speed."""

from __future__ import annotations

import json
import math

import pytest
import torch

from gradviz.devices import transfer, transfer_reference
from gradviz.util.reference import load_reference


def test_cpu_measurements_are_labelled_and_say_what_needs_a_gpu():
    found = {m.key: m for m in transfer.measure_all("cpu", quick=True)}
    assert {"host_copy", "pinned", "sync_item", "sync_print", "sync_numpy", "sync_cpu"} <= set(
        found
    )
    assert {"one_large", "many_small"} <= set(found)
    assert all(m.device == "cpu" for m in found.values())
    assert math.isnan(found["pinned"].seconds) and "CUDA" in found["pinned"].note
    assert "cannot be measured" in found["host_copy"].note
    assert found["host_copy"].seconds > 0 and found["host_copy"].gb_per_s > 0


def test_time_it_takes_the_median_after_warm_up():
    calls = []
    transfer.time_it(lambda: calls.append(1), "cpu", repeats=5, warmup=2)
    assert len(calls) == 7


def test_no_reference_numbers_unless_recorded(tmp_path):
    assert load_reference(tmp_path / "missing.json", transfer_reference.REFERENCE_FORMAT) is None
    assert "--record" in transfer_reference.RECORD_COMMAND


def test_record_writes_device_and_date(tmp_path, monkeypatch):
    monkeypatch.setattr(
        transfer, "measure_all", lambda device: transfer.copy_bandwidth(device, 2**16, 2)
    )
    path = tmp_path / "ref.json"
    data = transfer.record(path, "cpu")
    loaded = json.loads(path.read_text())
    assert loaded == data == load_reference(path, transfer_reference.REFERENCE_FORMAT)
    assert loaded["measurements"][1]["seconds"] is None  # pinned: not measurable without CUDA
    assert loaded["device"] == "cpu" and loaded["measured_on"].endswith("UTC")
    assert loaded["measurements"][0]["key"] == "host_copy"


@pytest.mark.gpu
def test_gpu_copies_pageable_and_pinned():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    found = {m.key: m for m in transfer.measure_all("cuda:0", quick=True)}
    for key in ("h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned"):
        assert found[key].seconds > 0 and found[key].gb_per_s > 0


def test_the_timed_additions_write_into_outputs_made_beforehand():
    """A new 1 MB output per call timed allocating and first touching it: on a CPU that made
    one add over 262,144 values slower than 256 small adds. The work now reuses its outputs."""
    one, many = transfer.one_vs_many_work("cpu", 8, 16)
    assert one() is one() and many() is many() is one()
    big = one()
    assert torch.equal(many(), big)


def test_cpu_rows_carry_their_spread_and_say_syncs_cost_nothing_there():
    found = {m.key: m for m in transfer.measure_all("cpu", quick=True)}
    for key in ("host_copy", "sync_queue_only", "sync_item", "one_large", "many_small"):
        assert found[key].spread is not None and found[key].spread >= 0
    assert found["sync_item"].note == transfer_reference.CPU_SYNC_NOTE
    assert "no queue" in found["sync_queue_only"].note


def test_median_and_iqr():
    assert transfer_reference.median_and_iqr([3.0, 1.0, 2.0, 100.0, 4.0]) == (3.0, 2.0)
    assert transfer_reference.median_and_iqr([5.0]) == (5.0, 0.0)
