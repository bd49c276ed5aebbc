"""The Training page's curves: loss and accuracy against images seen, drawn live and with the
results.
"""

from __future__ import annotations

from gradviz.training.events import Progress
from gradviz.ui import charts
from gradviz.ui.training.runs import X_SEEN


def curve_rows(history: list[Progress]) -> tuple[list[dict], list[dict]]:
    """Loss, and accuracy (train; test once per epoch), against images seen, as chart rows.

    One row per reading, in long form (a `series` column for accuracy): each series' line
    joins its own readings, so the test accuracy measured once per epoch is one line too."""
    loss, acc = [], []
    for h in history:
        if h.kind == "start":
            continue
        x = int(h.images_seen)
        if h.loss is not None:
            loss.append({X_SEEN: x, "loss": float(h.loss)})
        for value, series in ((h.accuracy, "train accuracy"), (h.test_accuracy, "test accuracy")):
            if value is not None:
                acc.append({X_SEEN: x, "series": series, "accuracy": float(value)})
    return loss, acc


def chart(box, rows: list[dict], y: str, color: str | None = None) -> None:
    spec = charts.line_chart(
        rows, X_SEEN, y, color=color, points=len(rows) < 60, y_zero=False, height=220
    )
    box.vega_lite_chart(spec=spec, width="stretch")


def draw_curves(history: list[Progress], loss_box, acc_box) -> None:
    loss, acc = curve_rows(history)
    if not loss:
        return
    chart(loss_box, loss, "loss")
    chart(acc_box, acc, "accuracy", "series")
