"""gradviz.graph.values.preview_text: a tensor's preview written from its first values by one
template, the same text to the character as format_values of the whole tensor's nested
lists (what the previews were made from before), for every shape, dtype and odd value."""

from __future__ import annotations

import pytest
import torch

from gradviz.graph.values import format_values, preview_text, tensor_values


def reference(t: torch.Tensor) -> str:
    return format_values(t.tolist())


ODD = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-9, -1e-9, 1e-4, 99999.0]
ODD += [1e5, -1e5, 123456.0, 0.5, -2.25]


@pytest.mark.parametrize(
    "shape",
    [(), (0,), (3, 0), (2, 0, 3), (1,), (6,), (7,), (64, 32), (2, 7, 3), (1, 1, 1, 9)]
    + [(16, 6, 5, 5), (4, 3, 32, 32), (2,) * 9],
)
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.int64, torch.int8, torch.bool, torch.complex64]
)
def test_the_same_text_as_the_nested_lists(shape, dtype):
    t = (torch.randn(shape) * 1e3).to(dtype)
    assert preview_text(t) == reference(t)


@pytest.mark.parametrize("count", [7, 300])  # checked in Python, and by torch
def test_odd_values_anywhere_are_written_as_format_values_writes_them(count):
    for odd in ODD:
        t = torch.rand(count, dtype=torch.float64) + 1
        for where in (0, 5):  # among the values shown
            u = t.clone()
            u[where] = odd
            assert preview_text(u) == reference(u)
            assert preview_text(u.float()) == reference(u.float())
        u = t.clone()
        u[-1] = odd  # past the values shown: no effect
        assert preview_text(u) == reference(u)


def test_float32_at_the_edges_compares_as_python_floats():
    # float32(1e-4) is a little below 1e-4 as a Python float: exponent form, as before
    for v in (1e-4, 1e5, 99999.99, 0.00010001):
        for n in (1, 400):
            t = torch.full((n,), v, dtype=torch.float32)
            assert preview_text(t) == reference(t)


def test_views_and_a_given_head():
    t = torch.randn(9, 8, 7)
    for view in (t.transpose(0, 2), t[2:, 1:, ::2], t[:1].expand(9, -1, -1), t[3]):
        assert preview_text(view) == reference(view)
    head = t[:6, :6, :6].clone()  # only the first values, with the whole shape given
    assert preview_text(head, (9, 8, 7)) == reference(t)
    assert tensor_values(t)[1] == reference(t)


def test_half_precision_through_tensor_values():
    for dtype in (torch.float16, torch.bfloat16):
        t = (torch.randn(5, 9) * 100).to(dtype)
        assert tensor_values(t)[1] == reference(t.float())


@pytest.mark.parametrize("count", [7, 40, 300])
def test_many_odd_values_all_or_mixed_with_plain_ones(count):
    t = torch.randn(count, 5, dtype=torch.float64)
    for u in (
        t * 1e-6,  # every value in exponent form
        torch.relu(t) * 1e-4,  # zeros among small values, as a ReLU's gradients are
        torch.where(t > 0, t * 1e6, t),  # big and plain values mixed
        torch.where(t > 1, float("nan"), t * 1e-7),
    ):
        assert preview_text(u) == reference(u)
        assert preview_text(u.float()) == reference(u.float())


def test_remembered_answers_the_same_tensor_once(monkeypatch):
    from gradviz.graph import values

    computed = []
    real = values._values
    monkeypatch.setattr(values, "_values", lambda t, keep: computed.append(t) or real(t, keep))
    t = torch.arange(6.0)
    values.tensor_values(t)
    values.tensor_values(t)
    assert len(computed) == 2  # outside: every call computes
    with values.remembered():
        first = values.tensor_values(t)
        assert values.tensor_values(t) is first and len(computed) == 3
        assert values.tensor_values(t, keep=False) != first and len(computed) == 4
        assert values.tensor_stats(t) == values.tensor_stats(t)
        t.mul_(2)  # changed in place: a new version, answered anew
        assert values.tensor_values(t)[1] == reference(t) != first[1]
        assert len(computed) == 5
        with torch.inference_mode():
            u = torch.ones(3)
        assert values.tensor_values(u)[1] == values.tensor_values(u)[1] == reference(u)
    values.tensor_values(t)
    assert len(computed) == 8  # closed: nothing is remembered


def test_remembered_by_values_bit_for_bit(monkeypatch):
    from gradviz.graph import values

    computed = []
    real = values._values
    monkeypatch.setattr(values, "_values", lambda t, keep: computed.append(t) or real(t, keep))
    w = torch.randn(16, 6, 5, 5)
    zeros = torch.zeros(100)
    with values.remembered():
        first = values.tensor_values(w)
        assert values.tensor_values(w.clone()) is first  # a kept copy: the same values
        assert values.tensor_values(w.t() if w.dim() == 2 else w.transpose(0, 1).clone())
        assert len(computed) == 2  # another shape is another tensor
        values.tensor_values(zeros)
        negative = -zeros  # -0.0 everywhere: equal to 0.0, but written "-0.0000"
        assert values.tensor_values(negative)[1] == reference(negative) != reference(zeros)
        assert values.tensor_values(w.double())[1] == reference(w.double())
        assert len(computed) == 5
        small = torch.ones(3)  # too few values to be looked up by them
        values.tensor_values(small)
        values.tensor_values(small.clone())
        assert len(computed) == 7
        copy = w.clone()
        w.add_(1)  # changed in place after it was answered: answered anew, and its old
        assert values.tensor_values(w)[1] == reference(w) != first[1]  # answer is no
        assert values.tensor_values(w.clone())[1] == reference(w)  # match for a copy
        assert values.tensor_values(copy)[1] == first[1]  # the old values, written anew


def test_recalled_once_per_object_while_remembered():
    from gradviz.graph import values

    calls = []
    a, b = object(), object()
    for _ in range(2):
        values.recalled("x", a, lambda: calls.append(1) or len(calls))
    assert len(calls) == 2  # outside: every time
    with values.remembered():
        first = values.recalled("x", a, lambda: calls.append(1) or len(calls))
        assert values.recalled("x", a, lambda: calls.append(1) or len(calls)) == first
        assert values.recalled("y", a, lambda: calls.append(1) or len(calls)) != first
        assert values.recalled("x", b, lambda: calls.append(1) or len(calls)) != first
    assert len(calls) == 5


@pytest.mark.parametrize(
    "shape", [(), (1,), (4,), (6,), (7,), (300,), (3, 5), (2, 1, 4), (4, 3, 8, 8)]
)
@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.int64, torch.bool, torch.complex64],
)
def test_a_preview_without_values_is_the_first_six_as_format_values_writes_them(shape, dtype):
    """tensor_values(t, keep=False): the first 6 values in order, then how many there are;
    a tensor of at most 6 values is written whole, as a kept one is (no "…")."""
    for odd in [None, *ODD]:
        t = (torch.randn(shape) * 1e3).to(dtype)
        if odd is not None and dtype.is_floating_point and t.numel():
            t.view(-1)[min(2, t.numel() - 1)] = odd
        value, text = tensor_values(t, keep=False)
        data = t.float() if dtype == torch.float16 else t
        first = data.reshape(-1)[:6].tolist()
        assert value is None
        if t.numel() <= 6:
            assert text == format_values(data.tolist()) == tensor_values(t)[1], (odd, text)
            assert "…" not in text
        else:
            assert text == format_values(first)[:-1] + f", … ({t.numel():,} values)]", (odd, text)
