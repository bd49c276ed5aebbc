"""gradviz.ui.charts: Vega-Lite specs with their rows inside layers (no pandas in the server)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

from gradviz.ui import charts

ROWS = [
    {"size": 64, "median_ms": 0.5, "series": "CPU", "shape": "64x64"},
    {"size": 128, "median_ms": math.nan, "series": "CPU", "shape": "128x128"},
]


def test_line_chart_layers_carry_their_rows():
    spec = charts.line_chart(
        ROWS, "size", "median_ms", color="series", title="T", log_x=True, log_y=True,
        rules=[charts.Rule(2.0, "peak")],
    )  # fmt: skip
    assert "data" not in spec and spec["title"] == "T"
    values, rule = charts.layer_values(spec)
    assert [r["size"] for r in values] == [64, 128]
    assert values[1]["median_ms"] is None  # NaN is left out, not sent as invalid JSON
    assert rule == [{"value": 2.0, "label": "peak"}]
    enc = spec["layer"][0]["encoding"]
    assert enc["x"]["scale"] == {"type": "log"} and enc["y"]["scale"] == {"type": "log"}
    assert enc["color"]["field"] == "series"
    json.dumps(spec, allow_nan=False)  # strict JSON


def test_tooltip_types_follow_the_values():
    spec = charts.line_chart(ROWS, "size", "median_ms", tooltip=["series", "size", "median_ms"])
    tips = {t["field"]: t["type"] for t in spec["layer"][0]["encoding"]["tooltip"]}
    assert tips == {"series": "nominal", "size": "quantitative", "median_ms": "quantitative"}


def test_linear_axis_may_leave_out_zero():
    spec = charts.line_chart(ROWS, "size", "median_ms", y_zero=False)
    assert spec["layer"][0]["encoding"]["y"]["scale"] == {"zero": False}
    assert "scale" not in charts.line_chart(ROWS, "size", "median_ms")["layer"][0]["encoding"]["y"]


def test_streamlit_sends_layer_rows_as_json_without_pandas():
    """The reason for the module: a spec with layer data never loads pandas or pyarrow."""
    code = """
import sys
from streamlit.testing.v1 import AppTest

page = (
    "import streamlit as st\\n"
    "from gradviz.ui import charts\\n"
    "st.vega_lite_chart(spec=charts.line_chart([{'x': 1, 'y': 2}, {'x': 2, 'y': 3}], 'x', 'y'))\\n"
)
at = AppTest.from_string(page).run()
assert len(at.get("vega_lite_chart")) == 1
assert not at.exception, at.exception
print(sorted(m for m in ("pandas", "pyarrow", "altair", "numpy") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
