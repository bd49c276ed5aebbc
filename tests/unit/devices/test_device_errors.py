"""gradviz.devices.errors: the one table of what gradviz says about PyTorch's device errors,
used both for a program's runtime error (with its operands) and for a message alone
(gradviz.program.results.explain)."""

from __future__ import annotations

import pytest

from gradviz.devices.errors import DEVICE_ERRORS, explain_device_error
from gradviz.devices.lessons import LESSONS
from gradviz.program.results.explain import EXPLANATIONS, explain_error
from gradviz.util.mdtext import code

# One message per case, as PyTorch words it (torch 2.x; the conv form from an H100).
MESSAGES = {
    "gpu_and_cpu": "Expected all tensors to be on the same device, but found at least two "
    "devices, cuda:0 and cpu!",
    "other_devices": "Expected all tensors to be on the same device, but found at least two "
    "devices, mps:0 and meta!",
    "two_gpus": "Expected all tensors to be on the same device, but found at least two "
    "devices, cuda:1 and cuda:0!",
    "index_device": "indices should be either on cpu or on the same device as the indexed "
    "tensor (cpu)",
    "numpy_cuda": "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy "
    "the tensor to host memory first.",
    "no_cuda": "Found no NVIDIA driver on your system.",
}
# What the program's runtime error (reports.DeviceErrorDetails.kind) and the device lessons
# name, and the device explanations gradviz.program.results.explain has always given.
KINDS = {"device_mismatch", "cuda_index_mismatch", "index_device", "numpy_cuda", "no_cuda"}
EXPLAINED = {"device_mismatch", "numpy_cuda", "no_cuda"}


def test_the_table_covers_every_kind_both_callers_need():
    assert set(MESSAGES) == set(DEVICE_ERRORS)
    assert {t.kind for t in DEVICE_ERRORS.values()} == KINDS
    assert {x.kind for x in LESSONS if x.error} <= KINDS
    assert {t.explanation for t in DEVICE_ERRORS.values()} - {None} == EXPLAINED
    # explain's own table holds no second wording of a device error
    assert not {e.key for _, e in EXPLANATIONS} & (KINDS | EXPLAINED)


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_each_case_is_recognised_in_its_own_words(case):
    text = DEVICE_ERRORS[case]
    exp = explain_device_error(MESSAGES[case], {})
    assert exp is not None and (exp.kind, exp.title) == (text.kind, text.title)
    assert exp.rule.startswith(text.rule[:40]) and "{" not in exp.rule
    assert exp.fix_code and "{" not in exp.fix_code


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_a_message_alone_is_explained_in_the_same_words(case):
    """explain_error (the plain explanation) and a runtime error's device details say the
    same title, rule and fix: the table's."""
    device = explain_device_error(MESSAGES[case], {})
    explanation = explain_error(MESSAGES[case])
    if DEVICE_ERRORS[case].explanation is None:
        assert explanation is None
        return
    assert explanation is not None
    assert explanation.key == DEVICE_ERRORS[case].explanation
    assert (explanation.title, explanation.plain) == (device.title, device.rule)
    assert explanation.fix == code(device.fix_code)


def test_a_convolution_with_one_device_is_not_a_device_error():
    dtypes = "Input type (torch.cuda.FloatTensor) and weight type (torch.cuda.HalfTensor) should be the same"
    assert explain_device_error(dtypes, {}) is None
    assert explain_error(dtypes) is None
    mixed = (
        "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"
    )
    assert explain_error(mixed).key == "device_mismatch"


def test_older_numpy_wording_is_still_recognised():
    # the pattern explain.py had for this message before the table was one
    assert explain_error("Use Tensor.cpu() to copy the tensor to host memory first.").key == (
        "numpy_cuda"
    )
