"""Charts as Vega-Lite specifications: plain dicts the pages hand to st.vega_lite_chart.

Why not Altair or st.line_chart: both go through pandas and pyarrow, whose import costs the
server about 100 MB with Altair (docs/BENCHMARKS.md), a large share of a Community Cloud
app's 690 MB. A spec built here carries its rows inside each layer ("layer": [{"data":
{"values": ...}}]); Streamlit only converts a spec's top-level data to Arrow, so layer data
reaches the browser as the JSON it is, and the server never imports pandas.

No Streamlit here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

QUANT, NOMINAL = "quantitative", "nominal"


@dataclass(frozen=True)
class Rule:
    """A horizontal reference line (a peak, a target) with a label for its tooltip."""

    value: float
    label: str


def _clean(v):
    """JSON-safe: NaN and infinities become None (Vega-Lite then leaves the point out)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _rows(rows: list[dict]) -> list[dict]:
    return [{k: _clean(v) for k, v in row.items()} for row in rows]


def _axis(field: str, title: str, log: bool, kind: str = QUANT) -> dict:
    enc = {"field": field, "type": kind, "title": title}
    if log:
        enc["scale"] = {"type": "log"}
    return enc


def line_chart(
    rows: list[dict],
    x: str,
    y: str,
    *,
    color: str | None = None,
    title: str = "",
    x_title: str | None = None,
    y_title: str | None = None,
    log_x: bool = False,
    log_y: bool = False,
    tooltip: list[str] | None = None,
    points: bool = True,
    rules: list[Rule] = (),
    y_zero: bool = True,
    height: int | None = None,
) -> dict:
    """Lines of y against x (one per value of `color`), with points and tooltips, and
    optional horizontal rules. `tooltip` fields are numbers when the first row has a number
    there, text otherwise."""
    sample = rows[0] if rows else {}
    fields = tooltip if tooltip is not None else [f for f in (color, x, y) if f]
    tips = [
        {
            "field": f,
            "type": QUANT
            if isinstance(sample.get(f), int | float) and not isinstance(sample.get(f), bool)
            else NOMINAL,
        }
        for f in fields
    ]
    y_enc = _axis(y, y_title if y_title is not None else y, log_y)
    if not log_y and not y_zero:
        y_enc["scale"] = {"zero": False}
    encoding = {"x": _axis(x, x_title if x_title is not None else x, log_x), "y": y_enc}
    if color:
        encoding["color"] = {
            "field": color,
            "type": NOMINAL,
            "legend": {"orient": "bottom", "title": None},
        }
    encoding["tooltip"] = tips
    layers = [
        {
            "data": {"values": _rows(rows)},
            "mark": {"type": "line", "point": points},
            "encoding": encoding,
        }
    ]
    for rule in rules:
        layers.append(
            {
                "data": {"values": [{"value": _clean(rule.value), "label": rule.label}]},
                "mark": {"type": "rule", "strokeDash": [4, 4], "color": "gray"},
                "encoding": {
                    "y": {"field": "value", "type": QUANT},
                    "tooltip": [
                        {"field": "label", "type": NOMINAL},
                        {"field": "value", "type": QUANT},
                    ],
                },
            }
        )
    spec = {"layer": layers}
    if title:
        spec["title"] = title
    if height:
        spec["height"] = height
    return spec


def layer_values(spec: dict) -> list[list[dict]]:
    """The rows of each layer of a spec made here (tests and scripts read charts back)."""
    return [layer.get("data", {}).get("values", []) for layer in spec.get("layer", [])]
