"""The autograd page meets hostile input with a message: program text and URL parameters.

AppTest drives the real page (programs run in the sandbox's workers, as on the server).
"""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradviz.program.share import encode_program
from gradviz.ui.autograd import TAB_KEY
from gradviz.util import mdtable

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
    assert "error." in message and "Traceback" not in message


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
    table = mdtable.find((m.value for m in at.markdown), "requires_grad")
    assert next(r for r in table if r["name"] == "k")["value"] == "[5.0000, 5.0000]"
