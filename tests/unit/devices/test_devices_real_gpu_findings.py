"""What the first run on a real GPU (bench/gpu_check.py on an H100, torch 2.11) found, held
on the CPU: random numbers made on a real CUDA device, an older FakeTensorMode's words for a
device mismatch, and a convolution's device error as its CUDA kernel words it."""

from __future__ import annotations

import pytest
import torch

from gradviz.cli import train
from gradviz.devices import simulated as devices
from gradviz.devices.errors import explain_device_error
from gradviz.program.interpreter.run import run_program
from gradviz.program.recording import state
from gradviz.program.results.explain import explain_error
from gradviz.program.results.trace import RunOptions
from gradviz.program.runtime import torch_calls as library

OLD_WORDS = (
    "Unhandled FakeTensor Device Propagation for aten.mm.default, found two different "
    "devices cuda:0, cpu"
)
CONV_ON_GPU = (
    "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"
)


def test_an_older_fake_tensor_mode_mismatch_is_pytorchs_device_error():
    """torch 2.11's FakeTensorMode said 'Unhandled FakeTensor Device Propagation': the
    simulation took it for some other failure and let every mix of devices run."""
    err = devices.older_fake_mismatch(RuntimeError(OLD_WORDS))
    assert isinstance(err, devices.SimulatedDeviceError)
    assert str(err) == (
        "Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cpu!"
    )
    assert devices.is_device_error(err)
    index = OLD_WORDS.replace("aten.mm.default", "aten.index.Tensor")
    assert devices.older_fake_mismatch(RuntimeError(index)) is None  # its own rule
    assert devices.older_fake_mismatch(RuntimeError("shape mismatch")) is None


def test_the_shadow_raises_the_device_error_for_older_words():
    shadow = devices.FakeShadow()

    def older_fake_mode(*_args, **_kwargs):
        raise RuntimeError(OLD_WORDS)

    with pytest.raises(devices.SimulatedDeviceError, match="same device"):
        shadow.run(older_fake_mode, (torch.ones(2),), {})

    def other(*_args, **_kwargs):
        raise RuntimeError("something else")

    with pytest.raises(RuntimeError, match="something else"):
        shadow.run(other, (torch.ones(2),), {})


def test_a_convolutions_device_error_on_a_real_gpu_is_explained():
    """On the H100, the tutorial network with its images on the GPU failed with the cuDNN
    kernel's words, which gradviz did not recognise as a device error."""
    found = explain_device_error(CONV_ON_GPU, {"images": "cuda:0", "net.conv1": "cpu"})
    assert found is not None and found.kind == "device_mismatch"
    assert found.devices == ["cuda:0", "cpu"]
    assert found.move == "net.conv1" and found.fix_code == "net.conv1 = net.conv1.to(images.device)"
    assert explain_error(CONV_ON_GPU).key == "device_mismatch"
    # the same words about two dtypes on one device are not a device error
    dtypes = "Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same"
    assert explain_device_error(dtypes, {"x": "cuda:0"}) is None
    assert explain_error(dtypes) is None or explain_error(dtypes).key != "device_mismatch"


class _Generators:
    """torch.Generator where only CUDA has what a real device gives: records the devices."""

    def __init__(self, real):
        self.real = real
        self.made: list[str] = []

    def __call__(self, device="cpu"):
        self.made.append(str(device))
        return self.real()  # a CPU generator stands in for the device's


def test_random_numbers_on_a_real_cuda_device_use_a_generator_of_that_device(monkeypatch):
    """On the H100 every torch.randn(..., device='cuda') failed: 'Expected a 'cuda' device
    type for generator but found 'cpu''. The run now keeps one generator per real device,
    seeded as torch.manual_seed seeds each device."""
    run = state.RunState.__new__(state.RunState)
    run.seed, run.shadow = 7, None
    run.generator = torch.Generator().manual_seed(7)
    run.device_generators = {}
    fake = _Generators(torch.Generator)
    monkeypatch.setattr(state.torch, "Generator", fake)
    first = run.generator_for(torch.device("cuda", 0))
    assert fake.made == ["cuda:0"] and run.generator_for(torch.device("cuda:0")) is first
    assert first.initial_seed() == 7
    run.manual_seed(3)  # every device's generator, as torch.manual_seed
    assert first.initial_seed() == 3 and run.generator.initial_seed() == 3
    assert run.generator_for(torch.device("cpu")) is run.generator
    run.shadow = object()  # simulated CUDA: values are made on the CPU
    assert run.generator_for(torch.device("cuda", 1)) is run.generator


def test_the_device_of_a_random_call():
    assert library.random_device((3,), {"device": "cuda"}) == torch.device("cuda")
    assert library.random_device((torch.ones(2),), {}) == torch.device("cpu")
    assert library.random_device((2, 2), {}) == torch.device("cpu")
    assert library.random_device((2,), {"device": "nonsense"}) == torch.device("cpu")


def test_seeded_random_numbers_on_simulated_cuda_are_the_cpu_runs():
    source = "torch.manual_seed(5)\na = torch.randn(3, device='cuda')\n"
    sim = run_program(source, RunOptions(simulate_cuda=True, classic=False))
    cpu = run_program(source.replace("'cuda'", "'cpu'"), RunOptions(classic=False))
    assert sim.error is None and sim.tensor("a").device == "cuda:0"
    assert sim.tensor("a").value == cpu.tensor("a").value


def test_peak_gpu_memory_is_read_from_the_torch_device():
    """train --json died on the H100: the result's device is words ('cuda (NVIDIA H100 ...)'),
    not a device torch reads."""
    assert train._peak_gpu_memory(torch.device("cpu")) is None


def test_a_gpu_input_into_a_cpu_convolution_fails_where_and_as_on_a_real_gpu():
    """The tutorial network with only its images moved to the GPU: on the H100 PyTorch
    refused conv1 (line 14) in the convolution's words; simulated CUDA on torch 2.11 ran on
    to fc1 (line 17). Now both versions refuse conv1 with the real message."""
    from gradviz.program.presets import PRESETS_BY_KEY

    source = PRESETS_BY_KEY["tutorial_net"].source
    trace = run_program(
        source,
        RunOptions(simulate_cuda=True, classic=False, device_overrides={"images": "cuda"}),
    )
    err = trace.error
    assert err is not None and err.line == 14
    assert err.message == CONV_ON_GPU
    assert err.details.explanation == "device_mismatch"
    assert err.details.device.move == "net.conv1"
    assert err.details.device.fix_code == "net.conv1 = net.conv1.to(images.device)"
