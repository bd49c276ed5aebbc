"""Open every page of app.py in Streamlit's AppTest and print what each showed, as JSON.

Run by tests/deploy with the Python of a freshly set-up virtual environment, so it imports
only Streamlit and the app (no pytest):

    .venv/bin/python tests/deploy/open_every_page.py app.py

Pages come from app.py's PAGE_TABLE (read with ast, not imported). AppTest.switch_page only
takes page files, and app.py's pages are functions registered by st.navigation, so each is
opened by its registered page hash (AppTest's `_registered_pages` and `_page_hash`). Exit
status 0 when every page ran without an exception and showed its title, 1 otherwise.
"""

from __future__ import annotations

import ast
import json
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest


def page_table(app: Path) -> list[tuple[str, str, str]]:
    for node in ast.parse(app.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "PAGE_TABLE" for t in node.targets
        ):
            return [tuple(row) for row in ast.literal_eval(node.value)]
    raise SystemExit(f"no PAGE_TABLE in {app}")


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(e.value) for e in getattr(at, kind)]


def main(argv: list[str]) -> int:
    app = Path(argv[1] if len(argv) > 1 else "app.py").resolve()
    at = AppTest.from_file(str(app), default_timeout=180)
    at.run()
    by_title = {info.get("page_name"): h for h, info in at._registered_pages.items()}
    ok = True
    for module, title, _icon in page_table(app):
        started = time.perf_counter()
        page_hash = by_title.get(title)
        if page_hash is None:
            print(json.dumps({"page": module, "problem": f"not registered: {sorted(by_title)}"}))
            ok = False
            continue
        at._page_hash = page_hash
        at.run()
        report = {
            "page": module,
            "title": title,
            "seconds": round(time.perf_counter() - started, 1),
            "opened": at._finished_page_script_hash == page_hash,
            "exception": [str(e.value) for e in at.exception],
            "titles": texts(at, "title"),
            "warnings": texts(at, "warning"),
            "errors": texts(at, "error"),
            "markdown": len(at.markdown),
        }
        print(json.dumps(report), flush=True)
        ok &= report["opened"] and not report["exception"] and bool(report["titles"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
