"""Uploaded files in the server's memory.

Streamlit's upload store keeps every uploaded file's bytes in the server's memory until the
session ends or the browser deletes the file; its server refuses a body larger than
server.maxUploadSize before holding any of it. So:

- `cap_server_uploads()` (app.py, every run) sets server.maxUploadSize to what the training
  page accepts in this mode (training.settings.max_upload_bytes); .streamlit/config.toml
  holds the public cap, the smaller, which applies until a page has settled the mode;
- `budget_store()` (app.py, every run; installed once) makes the store refuse (HTTP 413) a
  file that would take what all sessions hold past training.settings.uploads_held_budget(),
  or what one session holds past one file's cap: the bytes are dropped as the request
  ends, never kept. A file sent straight to a session's upload URL, with no uploader to
  take it, would otherwise stay in memory for the life of the session;
- `forget(upload)` drops one file's bytes from the store once the page has handed them on
  (or refused them), as Streamlit's own chat input does with the files it reads.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.exceptions import HTTPException
from streamlit import config
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

from gradviz.training.settings import MEGABYTE, max_upload_bytes, uploads_held_budget

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


def budget_store() -> None:
    """The server's upload store counts what it holds against the budget (once per
    process: every session shares the store)."""
    found = _store()
    if found is not None and not isinstance(found[0].add_file, BudgetedAdd):
        store = found[0]
        store.add_file = BudgetedAdd(store, store.add_file)  # type: ignore[method-assign]


def held(store: MemoryUploadedFileManager, session_id: str | None = None) -> int:
    """Bytes the store holds: for one session, or for all of them (None)."""
    if session_id is None:
        stats = store.get_stats()
        return sum(stat.byte_length for group in stats.values() for stat in group)
    # A copy (one step under the GIL): a script thread may drop a file meanwhile.
    files = store.file_storage.get(session_id, {}).copy()
    return sum(len(f.data) for f in files.values())


class BudgetedAdd:
    """The store's add_file, refusing a file over the budget (HTTP 413: Streamlit's upload
    route answers with it, and the browser's uploader says the upload failed)."""

    def __init__(self, store: MemoryUploadedFileManager, add: Callable) -> None:
        self.store, self.add = store, add

    def __call__(self, session_id: str, file: UploadedFileRec) -> None:
        size = len(file.data)
        if held(self.store, session_id) + size > max_upload_bytes():
            raise HTTPException(413, "This session already holds an upload being evaluated")
        if held(self.store) + size > uploads_held_budget():
            raise HTTPException(413, "The server holds too many uploads now; try again soon")
        self.add(session_id=session_id, file=file)


def forget(upload: UploadedFile) -> None:
    """Drop an uploaded file's bytes from the server: from the upload store (a later run
    sees no file under the widget) and from the page's UploadedFile."""
    found = _store()
    if found is not None:
        store, session_id = found
        store.remove_file(session_id=session_id, file_id=upload.file_id)
    upload.close()
