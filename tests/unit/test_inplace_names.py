"""Names bound more than once and tensors changed in place: each node shows the value it
had then, and the in-place error names the line that changed the tensor as well as
backward's."""

from __future__ import annotations

from gradviz.program.interpreter import run_program

INPLACE = """\
x = torch.tensor([0.0, 1.0], requires_grad=True)
y = torch.exp(x)
y += 1
y.sum().backward()
"""


def test_the_node_before_an_in_place_change_shows_the_value_then():
    trace = run_program(INPLACE.replace("y.sum().backward()\n", ""))
    assert trace.error is None, trace.error
    by_label = {t.label: t for t in trace.tensors}
    assert set(by_label) == {"x", "y·L2", "y·L3"}
    assert by_label["y·L2"].value == [1.0, 2.718281828459045] or by_label["y·L2"].preview == (
        "[1.0000, 2.7183]"
    )
    assert by_label["y·L2"].preview == "[1.0000, 2.7183]"
    assert by_label["y·L3"].preview == "[2.0000, 3.7183]"
    model = trace.graph
    # x -> Exp -> y·L2 -> Add -> y·L3
    exp_out = model.by_title("y·L2").id
    after = model.by_title("y·L3").id
    into_after = [e.src for e in model.edges if e.dst == after]
    assert [model.node(s).title for s in into_after] == ["AddBackward0"]
    assert any(e.src == exp_out and e.dst == into_after[0] for e in model.edges)


def test_in_place_error_points_at_the_change_and_at_backward():
    err = run_program(INPLACE).error
    assert err is not None and err.line == 4
    assert "line 3, column 1" in err.hint and "y += 1" in err.hint


def test_an_alias_is_one_node_with_both_names():
    trace = run_program("h = torch.ones(2, requires_grad=True)\nx = h\n")
    assert [t.label for t in trace.tensors] == ["h = x"]
