"""gradviz.services.host: what the host's torch offers, asked of a worker; torch-free helpers."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from gradviz.devices import facts as device_facts
from gradviz.devices import info as device_info
from gradviz.graph.model import TensorInfo
from gradviz.services import host
from gradviz.services.jobs import JobFailed
from gradviz.util import resources, settings

CUDA = torch.cuda.is_available()


def test_gather_matches_torch():
    facts = device_facts.gather()
    assert facts.torch_version == torch.__version__
    assert facts.cuda_available is CUDA
    assert facts.cuda_count == (torch.cuda.device_count() if CUDA else 0)
    assert facts.devices[0].key == "cpu"
    cuda = [d for d in facts.devices if d.kind == "cuda"]
    if CUDA:
        assert not any(d.simulated for d in cuda) and facts.gpu_name == cuda[0].name
    else:
        assert [d.label for d in cuda] == ["cuda:0 (simulated)", "cuda:1 (simulated)"]
        assert facts.simulated and facts.gpu_name is None


def test_facts_are_asked_of_a_worker_once_and_kept(monkeypatch):
    monkeypatch.setattr(host, "_facts", None)
    asked = []
    real_ask = host.ask

    def counting_ask(kind, *args, **kwargs):
        asked.append(kind)
        return real_ask(kind, *args, **kwargs)

    monkeypatch.setattr(host, "ask", counting_ask)
    first = host.facts()
    assert host.facts() is first and asked == ["host_facts"]
    assert first == device_facts.gather()  # the worker saw what this process sees


def test_device_choices():
    sim = device_info.HostFacts("x", False, 0, False, ())
    assert sim.device_choices() == ["cpu", "cuda:0", "cuda:1"]
    real = device_info.HostFacts("x", True, 1, True, ())
    assert real.device_choices() == ["cpu", "cuda:0", "mps"]
    assert real.device_choices(simulate=True) == ["cpu", "cuda:0", "cuda:1"]


def test_device_label():
    assert device_info.device_label("cuda:0", True) == "cuda:0 (simulated)"
    assert device_info.device_label("cpu", True) == "cpu"
    assert device_info.device_label("cuda:0", False) == "cuda:0"


def _info(shape, dtype, device, grad):
    return TensorInfo(
        "t", "t", "t", 1, "", shape, dtype, device, grad, True, False, None, None, "", None,
        "g" if grad else None,
    )  # fmt: skip


def test_trace_memory_counts_values_and_gradients_per_device():
    rows = device_info.trace_memory(
        [_info([2, 3], "float32", "cpu", True), _info([4], "float64", "cuda:0", False)], True
    )
    assert rows == [
        {"device": "cpu", "tensors": 1, "bytes": 24, "grad_bytes": 24},
        {"device": "cuda:0 (simulated)", "tensors": 1, "bytes": 32, "grad_bytes": 0},
    ]


@pytest.mark.parametrize(
    "value,expected", [("1", True), ("true", True), (" YES ", True), ("0", False), ("", False)]
)
def test_public_mode(monkeypatch, value, expected):
    monkeypatch.setenv("GRADVIZ_PUBLIC", value)
    assert settings.public_host() is expected


def test_cpus_and_memory():
    assert 1 <= resources.available_cpus() <= (len(__import__("os").sched_getaffinity(0)))
    free = resources.cpu_memory_available()
    assert free is None or free > 0


def test_torch_version_from_metadata_without_import():
    assert torch.__version__.startswith(host.torch_version().split("+")[0])
    code = (
        "import sys, gradviz.services.host as h; h.torch_version(); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_placement_asked_of_a_worker():
    result = host.ask("placement", ("cuda:0",))
    assert result["device"] == "cuda:0"
    assert result["simulated"] is (not CUDA)
    assert set(result["parameters"]) == {"weight", "bias"}


def test_cuda_memory_asked_of_a_worker():
    rows = host.ask("cuda_memory")
    assert (rows == []) is (not CUDA)


def test_a_failed_ask_is_a_plain_error():
    with pytest.raises(JobFailed, match="placement"):
        host.ask("placement", ("nonsense-device",))


def test_facts_now_does_not_wait_for_the_worker(monkeypatch):
    """A first page view draws at once: facts_now() answers None while a worker is asked in
    the background, then the facts; a failure is said for a while, then it asks again."""
    import threading

    monkeypatch.setenv("GRADVIZ_SANDBOX", "on")
    monkeypatch.setattr(host, "_facts", None)
    monkeypatch.setattr(host, "_asking", None)
    monkeypatch.setattr(host, "_failed", None)
    release = threading.Event()
    known = device_facts.gather()
    calls = []

    def slow_ask(kind, *args, **kwargs):
        calls.append(kind)
        release.wait(30)
        if len(calls) == 1:
            raise JobFailed("the worker did not start")
        return known

    monkeypatch.setattr(host, "ask", slow_ask)
    assert host.facts_now() is None and not host.facts_settled()
    assert host.facts_now() is None  # still asking: no second ask
    release.set()
    host._asking.join(10)
    assert host.facts_settled()
    with pytest.raises(JobFailed):
        host.facts_now()
    with pytest.raises(JobFailed):  # said on every page run for FACTS_RETRY_S
        host.facts_now()
    monkeypatch.setattr(host, "FACTS_RETRY_S", 0.0)
    assert host.facts_now() is None  # then asked again
    host._asking.join(10)
    assert host.facts_now() is known and calls == ["host_facts", "host_facts"]
