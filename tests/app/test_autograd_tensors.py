"""AppTest: the Autograd page's Tensors tab (matrices as grids, summaries, all values on
demand) and what the graph says of names, in-place changes and cuts."""

from pathlib import Path

from page_tabs import open_tab
from streamlit.testing.v1 import AppTest

from tests import markdown_tables

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _run(source: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_area(key="program").input(source)
    at.button[0].click().run()  # the form's Run program
    assert not at.exception, at.exception
    return at


def _tensor_table(at: AppTest) -> dict[str, dict]:
    open_tab(at, "Tensors")
    rows = markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    return {r["name"]: r for r in rows}


def test_tensors_tab_summarises_every_tensor_and_shows_a_matrix_as_a_grid():
    at = _run(
        "W = torch.arange(6.0).reshape(2, 3)\n"
        "big = torch.linspace(0.0, 1.0, 500)\n"
        "huge = torch.ones(5000)\n"
    )
    _tensor_table(at)  # the summary's numbers: in the table under the tensors' table
    summary = markdown_tables.find((m.value for m in at.markdown), "norm")
    table = {r["name"]: r for r in summary}
    assert table["big"]["min"] == "0" and table["big"]["max"] == "1"
    assert table["big"]["mean"] == "0.5"
    assert table["W"]["norm"] == "7.416"  # sqrt(0+1+4+9+16+25)
    assert table["huge"]["mean"] == "1" and table["huge"]["norm"] == "70.71"

    at.selectbox(key="tensor_values").select("W").run()
    grid = markdown_tables.find((m.value for m in at.markdown), "col 2")
    assert grid == [
        {"": "row 0", "col 0": "0", "col 1": "1", "col 2": "2"},
        {"": "row 1", "col 0": "3", "col 1": "4", "col 2": "5"},
    ]

    at.selectbox(key="tensor_values").select("huge").run()
    texts = " ".join(m.value for m in at.markdown) + " ".join(i.value for i in at.info)
    assert "5,000 values" in texts and "4,096" in texts  # capped, and says so


def test_graph_draws_cuts_and_inputs_without_grad_and_says_what_dashes_mean():
    at = _run(
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = torch.exp(x)\n"
        "z = y.detach()\n"
        "with torch.no_grad():\n"
        "    w = y * 2\n"
        "W = torch.ones(3, 2, requires_grad=True)\n"
        "inp = torch.tensor([0.5, -1.0])\n"
        "q = F.linear(inp, W)\n"
    )
    dot = at.session_state["shown_dot"]
    dashed = [ln for ln in dot.splitlines() if "->" in ln and "style=dashed" in ln]
    assert any('label="detached"' in ln for ln in dashed)
    assert any('label="no_grad"' in ln for ln in dashed)
    assert any('label="input (no grad)"' in ln for ln in dashed)
    captions = " ".join(c.value for c in at.caption)
    assert "Dashed arrows" in captions and "detach()" in captions


def test_names_bound_twice_are_explained_and_in_place_error_names_both_lines():
    at = _run(
        "x = torch.tensor([0.0, 1.0], requires_grad=True)\n"
        "h = x * 2\n"
        "g = h\n"
        "y = torch.exp(x)\n"
        "y += 1\n"
        "y.sum().backward()\n"
    )
    captions = " ".join(c.value for c in at.caption)
    assert "y·L4" in captions and "name at line 4" in captions
    assert "h = g" in captions and "one tensor, two names" in captions
    hints = " ".join(i.value for i in at.info)
    assert "line 5, column 1" in hints
    assert any("Line 6" in e.value for e in at.error)


def test_in_place_error_shows_both_lines_with_carets():
    at = _run(
        "x = torch.tensor([0.0, 1.0], requires_grad=True)\n"
        "y = torch.exp(x)\n"
        "y += 1\n"
        "y.sum().backward()\n"
    )
    codes = [c.value for c in at.code]
    assert any(c.startswith("  4 | y.sum().backward()") for c in codes)
    assert any(c.startswith("  3 | y += 1") and "| ^" in c for c in codes)


def test_a_small_tensor_left_out_by_the_result_budget_says_why():
    at = open_tab(_run("".join(f"a{i} = torch.ones(2) * {i}\n" for i in range(205))), "Tensors")
    at.selectbox(key="tensor_values").select("a204").run()
    texts = " ".join(i.value for i in at.info)
    assert "at most 200 tensors" in texts and "4,096" not in texts
