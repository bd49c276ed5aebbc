"""The autograd page meets hostile input with a message: program text and URL parameters.

AppTest drives the real page (programs run in the sandbox's workers, as on the server).
"""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from gradviz.devices.info import HostFacts
from gradviz.program.share import encode_program
from gradviz.services import host
from gradviz.ui.autograd.tabs import TAB_KEY
from tests import markdown_tables

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120)


def _messages(at: AppTest) -> str:
    return " ".join(e.value for e in [*at.error, *at.warning, *at.info])


# (A lone surrogate cannot reach the page: the browser protocol is UTF-8; the core
# functions' handling of one is in corpus.py.)
HOSTILE_TEXT = {
    "empty": "",
    "huge": "a = 1\n" * 20_000,
    "binary": bytes(range(256)).decode("latin-1"),
    "nul": "x = 1\x00",
    "bidi": "x\u202e = torch.ones(2)",
    "dunder": "x = torch.ones(2)\ny = x.__class__",
    "bomb": "x = torch.ones(100000, 100000)",
    "deep": "x = " + "(" * 500 + "1" + ")" * 500,
}


@pytest.mark.parametrize("text", list(HOSTILE_TEXT.values()), ids=list(HOSTILE_TEXT))
def test_hostile_program_text_gives_a_message(text):
    at = _app().run()
    at.text_area(key="program").input(text)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert at.error, "no error message shown"
    message = at.error[0].value
    title = message.split("**")[1] if message.startswith("**") else ""
    internal = {f"{k} error." for k in ("forbidden", "name", "limit", "type", "runtime")}
    assert title.endswith(".") and title.lower() not in internal, message  # a plain title
    assert "Line" in message and "Traceback" not in message


def _zip_bomb() -> str:
    packed = zlib.compress(b"a" * 50_000_000, 9)
    return base64.urlsafe_b64encode(packed).decode().rstrip("=")


HOSTILE_PARAMS = {
    "not-base64": {"p": "%%%not base64%%%"},
    "truncated": {"p": encode_program("x = torch.ones(3)\n")[:-6]},
    "zip-bomb": {"p": _zip_bomb()},
    "too-long": {"p": "A" * 100_000},
    "not-utf8": {"p": base64.urlsafe_b64encode(zlib.compress(b"\xff\xfe\xfa")).decode()},
    "bad-options": {"view": "<script>", "dir": "UP", "theme": "x" * 5000, "ones": "yes"},
    "bad-backward": {"p": encode_program("x = torch.ones(2)\n"), "backward": "__class__.x"},
    "hostile-program": {"p": encode_program("import os\nos.system('id')\n")},
}


@pytest.mark.parametrize("params", list(HOSTILE_PARAMS.values()), ids=list(HOSTILE_PARAMS))
def test_hostile_query_parameters_give_a_message(params):
    at = _app()
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    text = _messages(at)
    assert at.warning or at.error, "no message for a bad link"
    assert "Traceback" not in text


MOVED = encode_program("p = torch.tensor([2.0], requires_grad=True)\nq = p ** 3\n")


def _no_internal_error(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert not any("internal error" in e.value for e in at.error), [e.value for e in at.error]


@pytest.mark.parametrize("to", ["cuda:7", "banana", "mps"])
def test_a_link_to_a_device_this_host_lacks_moves_nothing(to):
    """This host has no GPU (cpu and two simulated CUDA devices): cuda:7 gave an internal
    error; now it is a warning naming the field, and the program runs where it was written."""
    at = _app()
    for key, value in {"p": MOVED, "move": "*", "to": to}.items():
        at.query_params[key] = value
    at.run()
    _no_internal_error(at)
    assert any(w.value.startswith("`to`") and "moving nothing" in w.value for w in at.warning)
    assert _tensor_rows(at)["p"]["device"] == "cpu"


def test_a_link_is_checked_against_a_cuda_host_with_one_gpu(monkeypatch):
    """On a host with one real GPU, cuda:1 is not offered (and is not simulated)."""
    one_gpu = HostFacts("2.x", cuda_available=True, cuda_count=1, mps_available=False)
    monkeypatch.setattr(host, "_facts", one_gpu)
    at = _app()
    for key, value in {"p": MOVED, "move": "p", "to": "cuda:1"}.items():
        at.query_params[key] = value
    at.run()
    _no_internal_error(at)
    assert any("`cuda:1`" in w.value and "cpu, cuda\\:0)" in w.value for w in at.warning), [
        w.value for w in at.warning
    ]
    assert at.session_state["move_to"] == "cuda:0"  # the page's default device


def _tensor_rows(at: AppTest) -> dict[str, dict]:
    at.session_state[TAB_KEY] = "Tensors"  # made only while open
    at.run()
    rows = markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    return {r["name"]: r for r in rows}


HOSTILE = hs.one_of(hs.text(max_size=40), hs.sampled_from(["A" * 20_000, "%%%", "-1", "99999"]))


def _field(*good: str):
    """A link field's strategy: a value the page offers, or a hostile one."""
    return hs.one_of(hs.sampled_from(good), HOSTILE)


LINKS = hs.fixed_dictionaries(
    {},
    optional={
        "p": _field(MOVED, MOVED[:-5]),
        "view": _field("values", "classic"),
        "dir": _field("TB", "LR"),
        "theme": _field("dark", "lecture"),
        "backward": _field("q", "p", "nosuch"),
        "ones": _field("1", "0"),
        "saved": _field("1"),
        "retain": _field("1"),
        "move": _field("*", "p", "nosuch"),
        "to": _field("cpu", "cuda:0", "cuda:1", "cuda:7", "mps", "cuda"),
        "step": _field("1", "2"),
        "quiz": _field("1"),
        "zz": HOSTILE,
    },
)


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(LINKS)
@example({"p": MOVED, "move": "*", "to": "cuda:7"})  # the internal error this test first found
def test_any_share_link_opens_without_an_internal_error(params):
    at = _app()
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    _no_internal_error(at)
    assert "Traceback" not in _messages(at)


def test_page_still_works_after_hostile_input():
    at = _app().run()
    at.text_area(key="program").input("x = torch.ones(100000, 100000)")
    at.button[0].click().run()
    assert (
        "would allocate 40 GB" in at.error[0].value and "the limit is 100 MB" in at.error[0].value
    )
    at.text_area(key="program").input("k = torch.full((2,), 5.0)\n")
    at.session_state[TAB_KEY] = "Tensors"  # made only while open
    at.button[0].click().run()
    assert not at.error
    table = markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    assert next(r for r in table if r["name"] == "k")["value"] == "[5.0000, 5.0000]"
