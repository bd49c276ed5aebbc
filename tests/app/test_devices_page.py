"""AppTest: devices as a user meets them: move a leaf to (simulated) CUDA, see the device
colours, see a mixing error explained; the Devices page."""

import time
from pathlib import Path

import torch
from fresh_process import run_fresh
from page_tabs import open_tab
from streamlit.testing.v1 import AppTest

from gradviz.devices.lessons import LESSONS_BY_KEY
from gradviz.graph.dot import COPY_COLOR, DEVICE_COLORS
from gradviz.util.format import fmt_bytes
from tests import markdown_tables

APP = str(Path(__file__).resolve().parents[2] / "app.py")
SIMULATED = not torch.cuda.is_available()
CUDA0 = "cuda:0 (simulated)" if SIMULATED else "cuda:0"


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120)


def _opened() -> AppTest:
    """The app's first view, then its rerun once a worker has said what the host offers
    (in a browser the sidebar's 1 s fragment reruns it; AppTest runs no timed fragments)."""
    from gradviz.services import host

    at = _app().run()
    deadline = time.time() + 180
    while not host.facts_settled() and time.time() < deadline:
        time.sleep(0.2)
    return at.run()


def _dot(at: AppTest) -> str:
    return at.session_state["shown_dot"]


def _program(at: AppTest, source: str) -> AppTest:
    at.text_area(key="program").input(source)
    return at.button[0].click().run()  # the form's Run program


def test_sidebar_lists_devices_with_simulated_cuda_labelled():
    at = _opened()
    assert not at.exception
    text = "\n".join(m.value for m in at.sidebar.markdown)
    assert "**cpu**" in text
    assert CUDA0 in text


def test_toggle_a_leaf_to_cuda_colours_the_graph_by_device():
    at = _opened()
    dot = _dot(at)
    assert DEVICE_COLORS["cuda:0"] not in dot  # the lesson runs on the CPU
    at.multiselect(key="move_leaves").select("x").run()
    assert not at.exception
    assert any("Moved `x`" in i.value and CUDA0 in i.value for i in at.info)
    dot = _dot(at)
    assert DEVICE_COLORS["cuda:0"] in dot and CUDA0 in dot
    next(b for b in at.button if b.label == "Run backward").click().run()
    at = open_tab(at, "Tensors")  # the table of tensors, made while its tab is open
    table = markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    assert {r["device"] for r in table} == {"cuda:0"}
    x = next(r for r in table if r["name"] == "x")
    assert x["grad"] == "[2.0000, 2.6667, 3.3333]"  # same gradients as on the CPU
    legend = " ".join(m.value for m in at.markdown)
    assert "Devices:" in legend


def test_copy_edge_shown_for_to_cuda():
    at = _app().run()
    at = _program(at, LESSONS_BY_KEY["copy"].source)
    assert not at.exception
    dot = _dot(at)
    assert "copy cpu→cuda:0" in dot and COPY_COLOR in dot


def test_mixing_error_explained_with_the_tensor_to_move():
    at = _app().run()
    source = "w = torch.randn(2, 3, requires_grad=True)\nx = torch.randn(3)\ny = (w @ x).sum()\n"
    at = _program(at, source)
    assert not at.error
    at.multiselect(key="move_leaves").select("w").run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("Expected all tensors to be on the same device" in e for e in errors), errors
    assert any("Line 3" in e for e in errors)
    assert any("x = x.to(w.device)" in s.value for s in at.success)  # the fix, as code
    text = " ".join(m.value for m in at.markdown)
    assert "`w` on **cuda:0**" in text and "`x` on **cpu**" in text
    assert any("0-dim CPU tensor" in i.value for i in at.info)  # the rule in words
    if SIMULATED:
        assert any("simulated" in w.value for w in at.warning)
    # moving every leaf fixes it
    at.checkbox(key="move_all").check().run()
    assert not at.error


def test_devices_page():
    def script():
        from gradviz.ui.devices import page

        page.page()

    at = AppTest.from_function(script, default_timeout=120).run()
    assert not at.exception
    cases = markdown_tables.find((m.value for m in at.markdown), "PyTorch")
    assert len(cases) >= 10
    assert any("Expected all tensors" in c["PyTorch"] for c in cases)
    at.selectbox(key="device_lesson").select("index_gpu_index").run()
    assert any("indices should be either on cpu" in e.value for e in at.error)
    at.selectbox(key="placement_device").select("cuda:0").run()
    assert any("PyTorch answers: **" + CUDA0 in m.value for m in at.markdown)
    # recorded on a real GPU by `make gpu-check` (docs/gpu/, bench/transfer_reference.json)
    assert any("Recorded on NVIDIA H100 80GB HBM3" in m.value for m in at.markdown)
    sweep = markdown_tables.find((m.value for m in at.markdown), "size")
    assert [r["size"] for r in sweep][:1] == [fmt_bytes(4096)] and len(sweep) == 10
    assert any("pinned (GB/s)" in k for k in sweep[-1])
    checked = next(c.value for c in at.caption if "Checked on a real GPU" in c.value)
    assert "NVIDIA H100 80GB HBM3" in checked and "27 of 27 cases" in checked
    verdicts = markdown_tables.find((m.value for m in at.markdown), "verdict")
    assert len(verdicts) == 28 and {"match", "message differs"} <= {r["verdict"] for r in verdicts}
    at.button(key="measure").click().run()
    assert not at.exception
    rows = markdown_tables.find((m.value for m in at.markdown), "GB/s")
    assert any("host" in r["what"] for r in rows)


SERVER_MODULES_SCRIPT = """
import json, sys
from streamlit.testing.v1 import AppTest

page = "from gradviz.ui.devices import page\\npage.page()\\n"
at = AppTest.from_string(page, default_timeout=180).run()
errors = [e.value for e in at.error]
print(json.dumps({
    "exception": [str(e.value) for e in at.exception],
    "device_error_shown": any("Expected all tensors" in m.value for m in at.markdown),
    "loaded": sorted(m for m in ("torch._dynamo", "torch._inductor", "sympy")
                     if m in sys.modules),
}))
"""


def test_lessons_run_in_workers_not_in_the_server():
    """Simulated CUDA (FakeTensorMode) imports much of torch's compiler, about 70 MB: the
    Devices page's lessons run in sandbox workers, so the server process never loads it."""
    report = run_fresh(SERVER_MODULES_SCRIPT, timeout=300)
    assert report["exception"] == []
    if SIMULATED:
        assert report["device_error_shown"]  # the lessons still show PyTorch's errors
    assert report["loaded"] == []


def test_no_worker_to_ask_is_a_plain_message(monkeypatch):
    """Host facts come from a worker; when none can answer, the pages say so and keep working."""
    from gradviz.services import host
    from gradviz.services.jobs import JobFailed

    def no_worker():
        raise JobFailed("The worker process ended unexpectedly.")

    monkeypatch.setattr(host, "facts", no_worker)
    for name in ("_facts", "_failed", "_asking"):  # nothing asked yet in this server
        monkeypatch.setattr(host, name, None)
    at = AppTest.from_string("from gradviz.ui.devices import page\npage.page()\n").run()
    assert not at.exception
    assert "Could not ask a worker process what this host has" in at.error[0].value
    at = _opened()  # the autograd page: the program and its graph, no device controls
    assert not at.exception
    assert at.session_state["shown_dot"]
    assert any("Moving tensors between devices is unavailable" in c.value for c in at.caption)
    assert any("Could not ask a worker process" in w.value for w in at.sidebar.warning)


def test_devices_page_reports_a_broken_file_of_recorded_numbers(tmp_path, monkeypatch):
    from gradviz.devices import transfer_reference

    bad = tmp_path / "transfer_reference.json"
    bad.write_text('{"device": "cuda:0", "device_name": "X"}')
    monkeypatch.setattr(transfer_reference, "REFERENCE_PATH", bad)

    def script():
        from gradviz.ui.devices import page

        page.page()

    at = AppTest.from_function(script, default_timeout=120).run()
    assert not at.exception
    error = "\n".join(e.value for e in at.error)
    assert "not valid" in error and "missing field 'torch'" in error
    assert "--record" in error
    assert not any("No recorded GPU numbers yet" in i.value for i in at.info)


def test_allocator_table_reads_the_typed_figures():
    """A worker's CUDA allocator figures (devices.info.CudaMemory) as the table shows them,
    on any host: a GPU host's real figures are checked in tests/unit/devices/test_devices_gpu.py."""
    script = (
        "from gradviz.devices.info import CudaMemory\n"
        "from gradviz.ui import device_panel\n"
        "device_panel.allocator_table([CudaMemory('cuda:0', 2048, 4_194_304, 10**9, 8 * 10**10)])\n"
    )
    at = AppTest.from_string(script, default_timeout=60).run()
    assert not at.exception
    rows = markdown_tables.find((m.value for m in at.markdown), "reserved")
    assert rows == [
        {
            "device": "cuda:0",
            "allocated": fmt_bytes(2048),
            "reserved": fmt_bytes(4_194_304),
            "used (all processes, as nvidia-smi)": fmt_bytes(10**9),
            "total": fmt_bytes(8 * 10**10),
        }
    ]


def test_devices_page_without_a_gpu_check_says_how_to_make_one(tmp_path, monkeypatch):
    from gradviz.devices import lessons

    monkeypatch.setattr(lessons, "GPU_CHECK_PATH", tmp_path / "absent.json")

    def script():
        from gradviz.ui.devices import page

        page.page()

    at = AppTest.from_function(script, default_timeout=120).run()
    assert not at.exception
    assert any("No real GPU has checked these cases yet" in c.value for c in at.caption)
