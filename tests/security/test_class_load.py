"""bench/class_load.py, the class-of-30 load client that speaks Streamlit's websocket protocol:
its checks are right (a session's own drawing found, another session's program caught), and a
short run against a real public-mode server has no errors and no cross-session leaks. Timing
is measured by the script itself, not asserted here."""

from __future__ import annotations

import base64
import importlib.util
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

BENCH = Path(__file__).resolve().parents[2] / "bench" / "class_load.py"


def _bench():
    spec = importlib.util.spec_from_file_location("class_load", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _picture(svg: str) -> ForwardMsg:
    """A ForwardMsg carrying the page's plain picture, as gradviz.ui.autograd.graph_tab sends it."""
    msg = ForwardMsg()
    data = base64.b64encode(svg.encode()).decode()
    msg.delta.new_element.markdown.body = (
        f'<img alt="autograd graph" src="data:image/svg+xml;base64,{data}">'
    )
    return msg


def test_a_drawing_of_this_sessions_program_is_found_and_anothers_is_caught():
    bench = _bench()
    run = bench.Run(b"s1r0_x")
    run.read(_picture("<svg><text>s12r0_x</text></svg>"), 1.0)
    assert run.graph_at is None  # s12's drawing is not s1's, though s1 is in its name
    assert run.seen == {(12, 0)}
    run.read(_picture("<svg><text>s1r0_x</text></svg>"), 2.0)
    assert run.graph_at == 2.0 and run.seen == {(12, 0), (1, 0)}

    frame = ForwardMsg()
    frame.delta.new_element.iframe.srcdoc = "<html>s3r2_x</html>"
    other = bench.Run(b"s3r2_x")
    other.read(frame, 5.0)
    assert other.graph_at == 5.0

    busy = ForwardMsg()
    busy.delta.new_element.alert.body = "Not run yet: your turn"
    busy.delta.new_element.alert.format = 2  # a warning, but the page did not run it
    other.read(busy, 6.0)
    assert other.errors


def test_every_program_names_its_own_session_and_round():
    bench = _bench()
    source = bench.program(7, 2)
    assert "s7r2_x" in source and "s6" not in source
    assert bench.program(7, 2, same=True) == bench.program(3, 2, same=True)


def test_every_attack_passes_the_checker_so_it_reaches_the_run():
    """The hostile programs are within the language as written: the checker lets each one
    through, so the load test exercises the caps that act while a program runs."""
    from gradviz.program.syntax.checker import parse

    bench = _bench()
    assert len({label for label, _ in bench.ATTACKS}) == len(bench.ATTACKS)
    for _, source in bench.ATTACKS:
        parse(source)  # raises ProgramError if refused


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dot") is None, reason="the page draws with Graphviz's dot")
def test_a_class_beside_an_attacker_no_errors_no_internal_errors():
    bench = _bench()
    with ThreadPoolExecutor(max_workers=1) as pool:
        out = pool.submit(
            bench.run, bench.sys.executable, sessions=2, rounds=1, attackers=1
        ).result()
    assert out["errors"] == [] and out["leaks"] == [] and out["alive"]
    outcomes = [o for v in out["attacks"].values() for o in v]
    assert outcomes and out["attack_runs"] == len(outcomes)
    assert not [o for o in outcomes if o.startswith(("INTERNAL", "FAILED"))], outcomes


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dot") is None, reason="the page draws with Graphviz's dot")
def test_three_sessions_against_a_public_server_no_errors_no_leaks():
    bench = _bench()
    # In its own thread: the browser tests' Playwright keeps an event loop running in this one,
    # and the client's asyncio.run() needs a thread without one.
    with ThreadPoolExecutor(max_workers=1) as pool:
        out = pool.submit(bench.run, bench.sys.executable, sessions=3, rounds=2).result()
    assert out["errors"] == [] and out["leaks"] == []
    assert len(out["latency"]) == 6 and out["alive"]
    assert out["peak_pss"] > 0 and out["client_cpu"] > 0
