"""Checkpoints: save/load round trip, and every refusal with its message."""

from __future__ import annotations

import contextlib
import io
import os
import pickle

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradviz.training.checkpoint import (
    CheckpointError,
    load_weights,
    match_architecture,
    read_state_dict,
    save_state_dict,
)
from gradviz.training.models import TutorialNet, build_model


def _bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("arch", ["tutorial", "fast-cpu", "fast-gpu"])
def test_round_trip(arch):
    torch.manual_seed(0)
    model = build_model(arch).eval()
    blob = save_state_dict(model)
    got_arch, loaded = load_weights(blob)
    assert got_arch == arch
    x = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(model(x), loaded(x))


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_refuses_pickle_with_code():
    blob = _bytes({"conv1.weight": Evil()})
    with pytest.raises(CheckpointError, match="could run code"):
        read_state_dict(blob)


def test_refuses_plain_pickle_with_code():
    with pytest.raises(CheckpointError):
        read_state_dict(pickle.dumps(Evil()))


def test_refuses_whole_model_object():
    with pytest.raises(CheckpointError, match="could run code"):
        read_state_dict(_bytes(TutorialNet()))


@pytest.mark.parametrize(
    "blob",
    [
        b"garbage bytes \x00\x01",
        b"this is not a checkpoint",
        b"PK\x03\x04broken zip",
        os.urandom(4096),
    ],
)
def test_refuses_garbage(blob):
    with pytest.raises(CheckpointError):
        read_state_dict(blob)


def test_refuses_empty_and_huge():
    with pytest.raises(CheckpointError, match="empty"):
        read_state_dict(b"")
    # util.format's sizes: it said "The file is 0.0 MB ... (limit 0 MB)"
    with pytest.raises(CheckpointError, match=r"is 2\.0 KB; .*\(limit 1\.0 KB\)"):
        read_state_dict(b"x" * 2000, max_bytes=1000)
    with pytest.raises(CheckpointError, match=r"is 21 MB; .*\(limit 20 MB\)"):
        read_state_dict(b"x" * 21_000_000, max_bytes=20_000_000)


def test_refuses_non_dict_and_non_tensor_values():
    with pytest.raises(CheckpointError, match="not a state_dict"):
        read_state_dict(_bytes([torch.zeros(2)]))
    with pytest.raises(CheckpointError, match="not tensors"):
        read_state_dict(_bytes({"a": 1}))


def test_refuses_wrong_keys_and_shapes():
    state = TutorialNet().state_dict()
    state.pop("fc3.bias")
    with pytest.raises(CheckpointError, match="missing keys fc3.bias"):
        load_weights(_bytes(state))
    state = TutorialNet().state_dict()
    state["fc3.weight"] = torch.zeros(5, 84)
    with pytest.raises(CheckpointError, match="wrong shape for fc3.weight"):
        load_weights(_bytes(state))
    state = TutorialNet().state_dict()
    state["extra.weight"] = torch.zeros(1)
    with pytest.raises(CheckpointError, match="unexpected keys extra.weight"):
        match_architecture(state)


def test_refuses_nan_weights():
    state = TutorialNet().state_dict()
    state["fc1.weight"][0, 0] = float("nan")
    with pytest.raises(CheckpointError, match="NaN"):
        load_weights(_bytes(state))


@settings(max_examples=150, deadline=None)
@given(blob=st.binary(max_size=3000))
def test_any_bytes_are_refused_with_a_checkpoint_error(blob):
    with pytest.raises(CheckpointError):
        load_weights(blob)


@settings(max_examples=30, deadline=None)
@given(cut=st.integers(min_value=1, max_value=400), flip=st.integers(min_value=0, max_value=255))
def test_damaged_real_checkpoint_is_refused_or_loads(cut, flip):
    """Truncated or bit-flipped weights: either a CheckpointError or a valid model, never a crash."""
    blob = bytearray(save_state_dict(TutorialNet()))
    blob[cut * 7 % len(blob)] ^= flip
    damaged = bytes(blob[: len(blob) - cut])
    with contextlib.suppress(CheckpointError):
        load_weights(damaged)
