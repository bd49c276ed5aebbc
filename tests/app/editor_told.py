"""What the autograd page's code editor (gradviz.ui.autograd.code_editor) is told in an
AppTest, read as its script reads it: the error's place and the clicked line come as JSON text
(code_editor.wire)."""

import json

from streamlit.testing.v1 import AppTest

from gradviz.ui.autograd import code_editor

MARKS = ("error", "picked")  # the fields sent as JSON text


def editor_data(at: AppTest) -> dict | None:
    for c in at.get("bidi_component"):
        if c.proto.component_name == code_editor.NAME:
            data = json.loads(c.proto.json)
            for key in MARKS:
                assert data[key] is None or isinstance(data[key], str), data[key]
                data[key] = json.loads(data[key]) if data[key] is not None else None
            return data
    return None
