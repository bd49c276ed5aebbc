"""Uploaded files in the server's memory.

Streamlit's upload store keeps every uploaded file's bytes in the server's memory until the
session ends or the browser deletes the file; its server refuses a body larger than
server.maxUploadSize before holding any of it. So:

- `cap_server_uploads()` (app.py, every run) sets server.maxUploadSize to what the training
  page accepts in this mode (training.settings.max_upload_bytes); .streamlit/config.toml
  holds the public cap, the smaller, which applies until a page has settled the mode;
- `held_bytes()` is what the store holds for all sessions, counted against
  training.settings.uploads_held_budget() before a page takes on an upload;
- `forget(upload)` drops one file's bytes from the store once the page has handed them on
  (or refused them), as Streamlit's own chat input does with the files it reads.
"""

from __future__ import annotations

from streamlit import config
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.uploaded_file_manager import UploadedFile

from gradviz.training.settings import MEGABYTE, max_upload_bytes

CAP_OPTION = "server.maxUploadSize"  # in MEGABYTEs


def cap_server_uploads() -> None:
    """The server refuses uploads larger than the training page accepts in this mode."""
    megabytes = max_upload_bytes() // MEGABYTE
    if config.get_option(CAP_OPTION) != megabytes:
        config.set_option(CAP_OPTION, megabytes, "gradviz: what the training page accepts")


def _store() -> tuple[MemoryUploadedFileManager, str] | None:
    ctx = get_script_run_ctx()
    if ctx is None or not isinstance(ctx.uploaded_file_mgr, MemoryUploadedFileManager):
        return None
    return ctx.uploaded_file_mgr, ctx.session_id


def held_bytes() -> int:
    """Bytes of uploaded files the server holds now, every session's together."""
    found = _store()
    if found is None:
        return 0
    stats = found[0].get_stats()
    return sum(stat.byte_length for group in stats.values() for stat in group)


def forget(upload: UploadedFile) -> None:
    """Drop an uploaded file's bytes from the server: from the upload store (a later run
    sees no file under the widget) and from the page's UploadedFile."""
    found = _store()
    if found is not None:
        store, session_id = found
        store.remove_file(session_id=session_id, file_id=upload.file_id)
    upload.close()
