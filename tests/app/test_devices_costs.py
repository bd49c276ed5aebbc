"""AppTest of the Devices page's cost table: measured again on request, with its spread, and
saying where a CPU behaves unlike a GPU instead of showing a contradiction."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from gradviz.devices.transfer_reference import Measurement
from tests import markdown_tables

PAGE = "from gradviz.ui.devices import page\npage.page()\n"


def test_measure_again_measures_again(monkeypatch):
    from gradviz.services import host

    calls = []
    real = host.run_now

    def run_now(kind, args, *rest, **kw):
        if kind != "transfer":  # the host's facts, asked of a worker as on the page
            return real(kind, args, *rest, **kw)
        calls.append((kind, args))
        n = len(calls)
        return [
            Measurement("one_large", "one add", "cpu", 1e-5 * n, 1024, "", 1e-6),
            Measurement("many_small", "256 adds", "cpu", 6e-4 * n, 1024, "", 5e-5),
        ]

    monkeypatch.setattr(host, "run_now", run_now)
    at = AppTest.from_string(PAGE, default_timeout=120).run()
    at.button(key="measure").click().run()
    first = markdown_tables.find((m.value for m in at.markdown), "GB/s")
    at.button(key="measure").click().run()
    assert not at.exception
    second = markdown_tables.find((m.value for m in at.markdown), "GB/s")
    assert [kind for kind, _ in calls] == ["transfer", "transfer"]  # not a cached answer
    assert first[0]["median"] == "10.0 µs" and second[0]["median"] == "20.0 µs"
    assert second[0]["spread (IQR)"] == "1.0 µs"
