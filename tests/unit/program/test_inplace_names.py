"""Names bound more than once and tensors changed in place: each node shows the value it
had then, and the in-place error names the line that changed the tensor as well as
backward's."""

from __future__ import annotations

from gradviz.program.interpreter.run import run_program

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


def test_a_method_in_place_and_an_item_assignment_are_named_too():
    err = run_program(INPLACE.replace("y += 1", "y.mul_(2)")).error
    assert "line 3, column 1" in err.hint and "y.mul_(2)" in err.hint
    err = run_program(INPLACE.replace("y += 1", "y[0] = 5.0")).error
    assert err.line == 4 and "line 3" in err.hint


def test_log_reads_the_versions_in_pytorchs_message():
    import torch

    from gradviz.program.recording.inplace import InplaceLog

    log = InplaceLog()
    t = torch.zeros(2)
    assert log.watches("+=", (t, 1)) and log.watches(".add_()", (t, 1))
    assert not log.watches(".add()", (t, 1)) and not log.watches("+=", (1, t))
    token = log.before(t, True)
    t.add_(1)
    log.after(token, lambda: (3, 1, "t += 1"))
    assert log.snapshots[(id(t), 0)][1].tolist() == [0.0, 0.0]
    token = log.before(t, False)
    t.add_(1)
    log.after(token, lambda: (4, 1, "t += 1"))
    assert (id(t), 1) not in log.snapshots  # no name was bound to it at version 1
    message = "... is at version 2; expected version 1 instead."
    assert [e.line for e in log.culprits(message)] == [4]
    assert log.culprits("no versions here") == []


def test_a_manual_update_under_no_grad_stays_one_leaf():
    trace = run_program(
        "w = torch.ones(2, requires_grad=True)\n"
        "loss = (w * w).sum()\n"
        "loss.backward()\n"
        "with torch.no_grad():\n"
        "    w -= 0.1 * w.grad\n"
    )
    assert trace.error is None, trace.error
    w = [t for t in trace.tensors if t.name == "w"]
    assert len(w) == 1 and w[0].is_leaf


def test_an_in_place_method_without_a_new_name_is_drawn_and_noted():
    trace = run_program(
        "x = torch.tensor([0.0, 1.0], requires_grad=True)\ny = torch.exp(x)\ny.add_(1)\n"
    )
    y = trace.tensor("y")
    assert y.preview == "[1.0000, 2.7183]" and "changed in place later" in y.note
    titles = [n.title for n in trace.graph.nodes]
    assert "AddBackward0" in titles and "ExpBackward0" in titles


def test_the_updated_leaf_shows_its_value_now_and_says_so():
    trace = run_program(
        "w = torch.ones(2, requires_grad=True)\n"
        "(w * w).sum().backward()\n"
        "with torch.no_grad():\n"
        "    w -= 0.5 * w.grad\n"
    )
    (w,) = trace.tensors
    assert w.preview == "[0.0000, 0.0000]" and "after the change" in w.note


def test_a_full_log_no_longer_asks_where_a_change_was():
    import torch

    from gradviz.program.recording import inplace

    log = inplace.InplaceLog()
    t = torch.zeros(2)
    asked = []

    def where():
        asked.append(1)
        return (1, 0, "t += 1")

    for _ in range(inplace.MAX_EVENTS + 5):
        token = log.before(t, False)
        t.add_(1)
        log.after(token, where)
    assert len(log.events) == inplace.MAX_EVENTS == len(asked)
