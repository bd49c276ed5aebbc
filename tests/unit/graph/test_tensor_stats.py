"""gradviz.graph.values.tensor_stats: the summary every tensor gets, however big."""

import math

import pytest
import torch

from gradviz.graph.values import grad_size, tensor_stats


def test_stats_of_a_big_tensor_cover_every_value():
    stats = tensor_stats(torch.arange(10_000.0))
    assert stats["min"] == 0 and stats["max"] == 9999 and stats["mean"] == 4999.5
    assert math.isclose(stats["norm"], math.sqrt(sum(i * i for i in range(10_000))), rel_tol=1e-6)


def test_integer_bool_and_empty_tensors():
    assert math.isclose(
        tensor_stats(torch.tensor([True, False, True]))["mean"], 2 / 3, rel_tol=1e-6
    )
    assert tensor_stats(torch.tensor([3, -4]))["norm"] == 5
    assert tensor_stats(torch.empty(0)) is None
    assert tensor_stats(torch.empty(3, device="meta")) is None
    assert tensor_stats(None) is None


def test_a_programs_tensors_carry_them_the_librarys_drawing_does_not_ask_for_them():
    from gradviz.program.interpreter.run import run_program

    trace = run_program("w = torch.arange(4.0, requires_grad=True)\ny = (w * 2).sum()\n")
    stats = {t.label: t.stats for t in trace.graph.tensors}
    assert stats["w"]["max"] == 3 and stats["y"]["norm"] == 12


def _torch_stats(t: torch.Tensor) -> list[float]:
    """What tensor_stats gives for any tensor: torch's own four reductions."""
    data = t.detach()
    data = data.double() if data.dtype == torch.float64 else data.float()
    return torch.stack([data.min(), data.max(), data.mean(), data.norm()]).tolist()


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=2e-6)


_INF, _NAN = float("inf"), float("nan")
_EDGES = [
    [0.93, 0.93, 0.93, 0.93],
    [0.1, -0.2, 0.3],
    [5.0],
    [0.0, -0.0],
    [0.0, 0.0, 0.0],
    [1e-3, 2e4, -7.5, 123456.0],
    [_NAN, 1.0],
    [1.0, _INF],
    [-_INF, 2.0],
    [_INF, -_INF],
    [_NAN, _INF],
    [3e38, 3e38],  # torch's float32 sums overflow
    [3e38, 3e38, -3e38],
    [2e19],
    [1e19, 1e19],
    [1e-25, 1e-25, 1e-25],  # squares below float32's normal range: torch's norm is 0
    [1e-20] * 5,
    [1e-40, 1e-40],  # subnormal float32
    [1e-45],
    [1e-160, 3e-160],
    [1e-200],
    [1e200, -1e200],
    [1e308, 1e308],
    list(range(-15, 17)),  # 32 values, the last size taken in Python
    list(range(33)),  # one more: torch
]


def test_small_tensors_stats_match_torchs_own_on_edge_cases():
    for values in _EDGES:
        for dtype in (torch.float32, torch.float64):
            t = torch.tensor(values, dtype=dtype)
            for shaped in (t, t.reshape(1, -1), t[:1].reshape(())):
                got = tensor_stats(shaped)
                want = _torch_stats(shaped)
                assert all(
                    _same(got[k], w)
                    for k, w in zip(("min", "max", "mean", "norm"), want, strict=True)
                ), (values, dtype, tuple(shaped.shape), got, want)


def test_grad_size_of_small_gradients_matches_torchs_own_on_edge_cases():
    for values in _EDGES:
        for dtype in (torch.float32, torch.float64):
            g = torch.tensor(values, dtype=dtype)
            want = float(g.abs().float().mean())
            assert _same(grad_size(g), want), (values, dtype, grad_size(g), want)


def test_small_float_tensors_are_summed_without_torch_reductions(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("torch.stack called")

    monkeypatch.setattr(torch, "stack", refuse)
    stats = tensor_stats(torch.tensor([0.1, 0.2, 0.4]))
    # the exact mean rounded once to float32, as a float32 tensor holds it
    assert stats["mean"] == torch.tensor((0.1 + 0.2 + 0.4) / 3).item()
    assert stats["min"] == torch.tensor(0.1).item() and stats["max"] == torch.tensor(0.4).item()
    with pytest.raises(AssertionError, match="torch.stack"):
        tensor_stats(torch.arange(33.0))  # larger tensors still go to torch
