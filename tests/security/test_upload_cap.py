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

from gradviz.training.settings import MAX_CHECKPOINT_BYTES, MEGABYTE
from gradviz.util.settings import PUBLIC
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


async def _session(ws) -> str:
    """Run the page in a just-opened connection, to its end: the session's id."""
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
            return session_id


def _uploads(port: int, sessions: int, puts: list[tuple[int, int]]) -> list[int]:
    """Open `sessions` sessions (each page run to its end), then PUT files of the given
    sizes (session index, bytes) into them, one after another, as no page takes them."""
    from websockets.asyncio.client import connect

    async def go() -> list[int]:
        url = f"ws://127.0.0.1:{port}/_stcore/stream"
        async with contextlib.AsyncExitStack() as stack:
            ids = []
            for _ in range(sessions):
                ws = await stack.enter_async_context(
                    connect(url, subprotocols=["streamlit"], open_timeout=20, max_size=None)
                )
                ids.append(await _session(ws))
            return [await asyncio.to_thread(_put, port, ids[i], size) for i, size in puts]

    return _in_thread(asyncio.run, go())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "cap"),
    [({"GRADVIZ_PUBLIC": "1"}, PUBLIC.upload_bytes), ({}, MAX_CHECKPOINT_BYTES)],
    ids=["public", "local"],
)
def test_the_server_refuses_an_upload_over_the_pages_cap(env, cap):
    """A body over the mode's cap is refused (413) before the server holds it; one under
    it is taken (so the refusal is the size's, not the request's)."""
    port = free_port()
    proc = start_streamlit(ROOT / "app.py", port, env={"GRADVIZ_PUBLIC": "", **env})
    try:
        assert _uploads(port, 1, [(0, cap + 1), (0, cap - MEGABYTE)]) == [413, 204]
    finally:
        stop(proc)


@pytest.mark.slow
def test_uploads_no_page_takes_are_held_within_the_budget():
    """Files sent straight to sessions' upload URLs (no uploader takes them, so Streamlit
    would keep each for the life of its session): one file's worth per session, and
    PUBLIC.uploads_held_bytes for all sessions together; past that, 413 and nothing kept."""
    port = free_port()
    proc = start_streamlit(ROOT / "app.py", port, env={"GRADVIZ_PUBLIC": "1"})
    size = PUBLIC.upload_bytes - MEGABYTE
    sessions = PUBLIC.uploads_held_bytes // size + 1
    try:
        plan = [(0, size), (0, size)] + [(i, size) for i in range(1, sessions)]
        statuses = _uploads(port, sessions, plan)
        assert statuses[:2] == [204, 413]  # a second file in the same session
        assert statuses[2:] == [204] * (sessions - 2) + [413]  # past the server's budget
    finally:
        stop(proc)
