"""The Streamlit server never imports torch: programs, lessons, placement and host facts are
asked of worker processes, and what comes back is plain data (docs/BENCHMARKS.md: torch's
import is about 190 MB of the server's memory with CPU-only torch).

Each check runs in a fresh Python process, since this test process has torch imported."""

from __future__ import annotations

from fresh_process import run_fresh

AUTOGRAD_AND_DEVICES = """
import json, sys
from streamlit.testing.v1 import AppTest

HEAVY = ("torch", "torchvision", "numpy", "pandas", "pyarrow", "altair", "PIL", "sympy")

at = AppTest.from_file("app.py", default_timeout=180).run()
problems = [str(e.value) for e in at.exception]
graph_drawn = bool(at.session_state["shown_dot"])  # the first view waits for no worker
# Meanwhile a worker is asked what the host offers; the sidebar's 1 s fragment reruns the
# page once it has answered (AppTest runs no timed fragments: the test reruns it).
import time
from gradviz.services import host
deadline = time.time() + 180
while not host.facts_settled() and time.time() < deadline:
    time.sleep(0.2)
at = at.run()
sidebar = "\\n".join(m.value for m in at.sidebar.markdown)
# a program with backward, then its leaves moved to (simulated) CUDA
at.text_area(key="program").input("x = torch.tensor([1.0, 2.0], requires_grad=True)\\n"
                                  "y = (x * x).sum()\\ny.backward()\\n")
at = at.button[0].click().run()
problems += [str(e.value) for e in at.exception]
at.multiselect(key="move_leaves").select("x").run()
problems += [str(e.value) for e in at.exception]
moved = any("Moved `x`" in i.value for i in at.info)
# every tab beside the graph (each is made only while open), the Tensors tab last
from gradviz.ui.autograd.tabs import TAB_KEY, TABS
for label in [*TABS[2:], "Tensors"]:
    at.session_state[TAB_KEY] = label
    at = at.run()
    problems += [f"{label}: {e.value}" for e in at.exception]
from tests import markdown_tables
tensors = markdown_tables.find((m.value for m in at.markdown), "requires_grad") or []
grads = " ".join(r["grad"] for r in tensors)

page = "from gradviz.ui.devices import page\\npage.page()\\n"
dev = AppTest.from_string(page, default_timeout=180).run()
dev.selectbox(key="placement_device").select("cuda:0").run()
problems += [str(e.value) for e in dev.exception]
placement = any("PyTorch answers: **cuda:0" in m.value for m in dev.markdown)
lessons = len(markdown_tables.find((m.value for m in dev.markdown), "PyTorch") or [])

# every page as app.py draws it: the sidebar, then the page
opened = {}
for name in ("devices", "speed", "training", "autograd"):
    script = (f"from gradviz.ui.common import sidebar\\nfrom gradviz.ui.{name} import page\\n"
              f"sidebar()\\npage.page()\\n")
    one = AppTest.from_string(script, default_timeout=180).run()
    problems += [f"{name}: {e.value}" for e in one.exception]
    opened[name] = [t.value for t in one.title]
print(json.dumps({
    "problems": problems,
    "sidebar_has_cuda": "cuda:0" in sidebar,
    "graph_drawn": graph_drawn,
    "moved": moved,
    "grad_shown": "[2.0000, 4.0000]" in grads,
    "placement": placement,
    "lessons": lessons,
    "opened": opened,
    "loaded": sorted(m for m in HEAVY if m in sys.modules),
}))
"""


def test_autograd_and_devices_pages_work_without_torch_in_the_server():
    report = run_fresh(AUTOGRAD_AND_DEVICES, timeout=400)
    assert report["problems"] == []
    assert report["sidebar_has_cuda"]  # host facts came from a worker
    assert report["graph_drawn"] and report["moved"] and report["grad_shown"]
    assert report["placement"] and report["lessons"] >= 10
    assert report["opened"] == {
        "devices": ["Devices"],
        "speed": ["CPU vs GPU speed"],
        "training": ["CIFAR-10 training"],
        "autograd": ["Autograd playground"],
    }
    # Not torch, nor what the pages' tables, charts and pictures used to load in the server.
    assert report["loaded"] == []


EDITOR_MARKS = """
import json, sys
from streamlit.testing.v1 import AppTest
from gradviz.ui.autograd import code_editor

HEAVY = ("torch", "numpy", "pandas", "pyarrow")

at = AppTest.from_file("app.py", default_timeout=180).run()
at.text_area(key="program").input("a = torch.ones(3, requires_grad=True)\\nb = a * 2\\nc = nope + b\\n")
at = at.button[0].click().run()  # an error, at its line and column
at.session_state["viewer_selected"] = {"id": "t1", "title": "b", "line": 2, "text": "b = a * 2"}
at = at.run()  # and a node clicked in the graph
told = [json.loads(c.proto.json) for c in at.get("bidi_component")
        if c.proto.component_name == code_editor.NAME]
print(json.dumps({
    "problems": [str(e.value) for e in at.exception],
    "told": told,
    "loaded": sorted(m for m in HEAVY if m in sys.modules),
}))
"""


def test_the_code_editor_told_an_error_and_a_clicked_line_loads_no_dataframe_library():
    # Streamlit looks for a dataframe in each nested object of a component's data, and that
    # look imports numpy, pandas and pyarrow (about 85 MB of the server's memory: the crowd
    # of docs/BENCHMARKS.md); the editor's marks go as JSON text.
    report = run_fresh(EDITOR_MARKS, timeout=300)
    assert report["problems"] == []
    [told] = report["told"]
    assert told["error"] and told["picked"]  # both marks were sent
    assert report["loaded"] == []
