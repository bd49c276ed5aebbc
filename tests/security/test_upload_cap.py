"""A real server refuses an upload over the training page's cap before holding it: 20 MB on
a public host (.streamlit/config.toml, which applies before any page has run), 32 MB locally
(app.py raises it once a page has run in local mode). It accepted 50 MB in either mode.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import http.client
import uuid
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string

from gradviz.training.settings import MAX_CHECKPOINT_BYTES, MEGABYTE, PUBLIC_MAX_UPLOAD_BYTES
from tests.e2e.e2e_support import free_port, start_streamlit, stop

ROOT = Path(__file__).resolve().parents[2]


def _in_thread(fn, *args):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def _put(port: int, session_id: str, size: int) -> int:
    """PUT a file of `size` bytes to the session's upload URL, as the browser does; the
    HTTP status. A server that refuses on the headers answers before the body is sent (and
    closes the connection under it)."""
    token = generate_xsrf_token_string()
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="w.pt"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + b"\0" * size
        + f"\r\n--{boundary}--\r\n".encode()
    )
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.putrequest("PUT", f"/_stcore/upload_file/{session_id}/{uuid.uuid4()}")
        conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        conn.putheader("Content-Length", str(len(body)))
        conn.putheader("X-Xsrftoken", token)
        conn.putheader("Cookie", f"_streamlit_xsrf={token}")
        conn.endheaders()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.send(body)
        return conn.getresponse().status
    finally:
        conn.close()


def _uploads_after_a_page_run(port: int, sizes: list[int]) -> list[int]:
    """Open a session (a page run to its end), then PUT files of these sizes into it."""
    from websockets.asyncio.client import connect

    async def go() -> list[int]:
        async with connect(
            f"ws://127.0.0.1:{port}/_stcore/stream",
            subprotocols=["streamlit"],
            open_timeout=20,
            max_size=None,
        ) as ws:
            rerun = BackMsg()
            rerun.rerun_script.query_string = ""
            rerun.rerun_script.page_script_hash = ""
            await ws.send(rerun.SerializeToString())
            session_id = None
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await asyncio.wait_for(ws.recv(), 120))
                if msg.WhichOneof("type") == "new_session":
                    session_id = msg.new_session.initialize.session_id
                if msg.WhichOneof("type") == "script_finished" and session_id:
                    break
            return [await asyncio.to_thread(_put, port, session_id, size) for size in sizes]

    return asyncio.run(go())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "cap"),
    [({"GRADVIZ_PUBLIC": "1"}, PUBLIC_MAX_UPLOAD_BYTES), ({}, MAX_CHECKPOINT_BYTES)],
    ids=["public", "local"],
)
def test_the_server_refuses_an_upload_over_the_pages_cap(env, cap):
    """A body over the mode's cap is refused (413) before the server holds it; one under
    it is taken (so the refusal is the size's, not the request's)."""
    port = free_port()
    proc = start_streamlit(ROOT / "app.py", port, env={"GRADVIZ_PUBLIC": "", **env})
    try:
        small, big = _in_thread(_uploads_after_a_page_run, port, [cap - MEGABYTE, cap + 1])
        assert (small, big) == (204, 413)
    finally:
        stop(proc)
