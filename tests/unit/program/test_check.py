"""gradviz.program.gradcheck: gradients shown on the graph against float64 finite differences."""

import pytest

from gradviz.program.gradcheck import MAX_CHECK_ELEMENTS, check_gradients
from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS
from gradviz.program.results.trace import RunOptions


def _shown(source, target, ones=False):
    trace = run_program(source, RunOptions(backward=target, backward_ones=ones))
    assert trace.error is None, trace.error
    return {t.name: t.grad for t in trace.tensors if t.is_leaf and t.requires_grad}


# The tutorial's Net has 62,006 parameters: past the finite differences' cap, said plainly.
# (user_module_device is checked: its moved layer's float64 stand-ins follow model.to(device).)
NOT_CHECKED = ("detach_no_grad", "tutorial_net")


def test_big_preset_is_refused_plainly():
    preset = next(p for p in PRESETS if p.key == "tutorial_net")
    shown = _shown(preset.source, preset.backward)
    result = check_gradients(preset.source, preset.backward, shown)
    assert not result.ok and f"at most {MAX_CHECK_ELEMENTS}" in result.message


@pytest.mark.parametrize(
    "preset",
    [p for p in PRESETS if p.backward and not p.mistake and p.key not in NOT_CHECKED],
    ids=lambda p: p.key,
)
def test_presets_pass(preset):
    result = check_gradients(preset.source, preset.backward, _shown(preset.source, preset.backward))
    assert result.ok, result.message
    assert result.gradcheck_passed
    assert all(c.max_abs_diff < 1e-3 for c in result.leaves)


def test_detach_differs_and_says_why():
    preset = next(p for p in PRESETS if p.key == "detach_no_grad")
    result = check_gradients(preset.source, preset.backward, _shown(preset.source, preset.backward))
    assert not result.ok and result.gradcheck_passed is False
    assert "frozen" in result.message and "scale" in result.message


def test_wrong_shown_gradient_fails():
    source = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x ** 3).sum()\n"
    result = check_gradients(source, "y", {"x": [3.0, 99.0]})
    assert not result.ok
    assert result.gradcheck_passed  # autograd itself is right; the shown numbers are not
    assert result.leaves[0].max_abs_diff == pytest.approx(87.0, abs=1e-3)


def test_non_scalar_with_ones():
    source = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * x\n"
    result = check_gradients(source, "y", _shown(source, "y", ones=True), ones=True)
    assert result.ok, result.message


def test_program_error_and_size_and_nothing_to_check():
    assert "must run without errors" in check_gradients("x = torch.onse(2)\n", "x", {}).message
    assert "nothing to check" in check_gradients("x = torch.ones(2)\n", "x", {}).message
    big = f"x = torch.ones({MAX_CHECK_ELEMENTS + 1}, requires_grad=True)\ny = x.sum()\n"
    assert "at most" in check_gradients(big, "y", {}).message


def test_no_shown_gradient_asks_for_backward_and_a_wrong_shape_is_no_match():
    source = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x ** 3).sum()\n"
    result = check_gradients(source, "y", {})
    assert result.gradcheck_passed and not result.ok
    assert result.message == "Run backward first: no gradient is shown yet for x"
    assert result.leaves[0].numerical == pytest.approx([3.0, 12.0], abs=1e-4)
    wrong_shape = check_gradients(source, "y", {"x": [3.0, 12.0, 0.0]})
    assert not wrong_shape.ok and wrong_shape.leaves[0].max_abs_diff is None
    assert "differ from finite differences" in wrong_shape.message
