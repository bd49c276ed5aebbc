"""AppTest: uploaded weights and the server's memory (the server's own cap:
tests/security/test_upload_cap.py).

Streamlit holds every uploaded file's bytes in the server's memory for the life of the
session. The server accepted 50 MB files (the page refused them over 32 MB only once held)
and kept each one after the page had evaluated it. Now the server refuses a body over the
page's cap before holding it (20 MB on a public host, 32 MB locally), the page drops the
bytes once it has handed them to a worker or refused them, and uploads all sessions hold
are counted against a budget before a page takes on another.
"""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import torch
from streamlit.testing.v1 import AppTest

from gradviz.training.models import build_model
from gradviz.training.settings import MEGABYTE
from gradviz.util.settings import PUBLIC

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(Path(__file__).with_name("training_upload_script.py"))


def _weights() -> bytes:
    buf = io.BytesIO()
    torch.save(build_model("fast-cpu").state_dict(), buf)
    return buf.getvalue()


def _page(folder: Path) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    at.run()
    at.text_input(key="training_folder").set_value(str(folder))
    at.selectbox(key="training_device").set_value("cpu")
    return at.run()


def _upload(at: AppTest, name: str, blob: bytes) -> AppTest:
    at.file_uploader[0].set_value((name, blob, "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    return at


def test_weights_leave_the_server_once_handed_to_the_worker(tiny_folder):
    at = _upload(_page(tiny_folder), "w.pt", _weights())
    assert at.session_state["held_seen"] > 0  # the store had the file when the run began
    assert at.session_state["held_after_run"] == 0
    assert "fast-cpu weights:" in at.success[0].value and "w.pt" in at.success[0].value
    assert at.file_uploader[0].value is None  # a fresh, empty uploader
    at.run()  # the evaluation stays shown; nothing is evaluated again
    assert at.session_state["held_after_run"] == 0
    assert "fast-cpu weights:" in at.success[0].value


def test_a_refused_upload_leaves_the_server_too(tiny_folder, monkeypatch):
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    monkeypatch.setenv("GRADVIZ_DATA_ROOTS", str(tiny_folder))
    at = AppTest.from_file(SCRIPT, default_timeout=120).run()
    assert at.file_uploader[0].proto.max_upload_size_mb == PUBLIC.upload_bytes // MEGABYTE
    at = _upload(at, "big.pt", b"\0" * (PUBLIC.upload_bytes + 1))
    assert "Weights refused" in at.error[0].value and "limit 20 MB" in at.error[0].value
    assert at.session_state["held_after_run"] == 0


def test_config_holds_the_public_cap():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * MEGABYTE == PUBLIC.upload_bytes
