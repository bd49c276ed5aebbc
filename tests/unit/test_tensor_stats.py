"""gradviz.graph.values.tensor_stats: the summary every tensor gets, however big."""

import math

import torch

from gradviz.graph.values import tensor_stats


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
    from gradviz.program.interpreter import run_program

    trace = run_program("w = torch.arange(4.0, requires_grad=True)\ny = (w * 2).sum()\n")
    stats = {t.label: t.stats for t in trace.graph.tensors}
    assert stats["w"]["max"] == 3 and stats["y"]["norm"] == 12
