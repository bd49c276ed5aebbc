"""Higher-order gradients: the nodes a create_graph=True backward builds (the gradient's own
graph) are marked with the backward call that built them, the tensor it ran from is joined to
the gradient, and a second backward's call graph and walk-through go over those nodes."""

from __future__ import annotations

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.higher_order_programs import BY_HESSIAN, HESSIAN

AUTOGRAD_GRAD = """x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x, create_graph=True)
g.backward()
"""
BACKWARD_CREATE_GRAPH = """x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
y.backward(create_graph=True)
x.grad.backward()
"""


def _run(source: str):
    trace = run_program(source, RunOptions(classic=False))
    assert trace.error is None, trace.error
    return trace


def _made_by(graph) -> dict[str, int | None]:
    return {n.id: n.made_by for n in graph.nodes}


def test_the_nodes_the_create_graph_pass_built_are_marked_with_its_call():
    trace = _run(AUTOGRAD_GRAD)
    graph = trace.graph
    by_title: dict[str, list] = {}
    for n in graph.nodes:
        by_title.setdefault(n.title, []).append(n.made_by)
    # y = x ** 3's PowBackward0 is the program's; the gradient 3·x² built a second one, and
    # the multiplications by 3 and by the upstream gradient, in backward call 1
    assert sorted(by_title["PowBackward0"], key=str) == [1, None]
    assert by_title["MulBackward0"] == [1] and by_title["MulBackward1"] == [1]
    tensors = {graph.tensor_info(n.tensor).name: n.made_by for n in graph.nodes if n.tensor}
    assert tensors == {"x": None, "y": None, "g": 1}
    assert [r.create_graph for r in trace.backward] == [True, False]


def test_the_second_call_draws_both_graphs_joined_and_walks_the_built_nodes():
    trace = _run(AUTOGRAD_GRAD)
    call = trace.at_call(None)  # the page and the command line show the last call
    graph = call.graph
    names = {graph.tensor_info(n.tensor).name: n.id for n in graph.nodes if n.tensor}
    assert set(names) == {"x", "y", "g"}  # y's graph too, not only g's
    edges = [(e.src, e.dst, e.label) for e in graph.edges if e.kind == "gradient"]
    assert edges == [(names["y"], names["g"], "dy/dx")]
    made = _made_by(graph)
    steps = call.backward[0].steps
    assert [made.get(s.node) for s in steps] == [1, 1, 1, None]  # then x's AccumulateGrad
    # d2y/dx2 = 6x = 12 lands in x.grad, shown on the graph as the first gradient would be
    assert call.tensor("x").grad == 12.0


def test_backward_with_create_graph_marks_x_grad_and_draws_it_unnamed():
    trace = _run(BACKWARD_CREATE_GRAPH)
    graph = trace.at_call(None).graph
    start = next(
        n for n in graph.nodes if n.tensor and graph.tensor_info(n.tensor).name == "x.grad"
    )
    assert start.made_by == 1  # the gradient the second backward starts from, a node
    assert any(e.kind == "gradient" and e.dst == start.id for e in graph.edges)
    built = [n.title for n in graph.nodes if n.kind == "function" and n.made_by == 1]
    assert "PowBackward0" in built


def test_without_create_graph_nothing_is_marked():
    trace = _run(
        "x = torch.tensor(2.0, requires_grad=True)\ny = x ** 3\n"
        "(g,) = torch.autograd.grad(y, x)\nz = x * 2\nz.backward()\n"
    )
    for graph in [trace.graph] + [c.graph for c in trace.calls.kept]:
        assert all(n.made_by is None for n in graph.nodes)
        assert all(e.kind != "gradient" for e in graph.edges)
    assert not any(r.create_graph for r in trace.backward)


def test_a_given_gradient_s_own_graph_is_not_marked():
    trace = _run(
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\nv = torch.ones(2, requires_grad=True)\n"
        "u = v * 3\ny = x ** 2\n"
        "(g,) = torch.autograd.grad(y, x, grad_outputs=u, create_graph=True)\n"
    )
    graph = trace.graph
    u = next(n for n in graph.nodes if n.tensor and graph.tensor_info(n.tensor).name == "u")
    assert u.made_by is None
    producer = next(e.src for e in graph.edges if e.dst == u.id)
    assert graph.node(producer).made_by is None  # u's MulBackward0: the program's
    g = next(n for n in graph.nodes if n.tensor and graph.tensor_info(n.tensor).name == "g")
    assert g.made_by == 1


def test_a_loop_of_create_graph_passes_notes_a_bounded_number_of_them():
    trace = _run(
        "w = torch.tensor(1.5, requires_grad=True)\n"
        "for i in range(60):\n"
        "    y = (w * 3) ** 2\n"
        "    (g,) = torch.autograd.grad(y, w, create_graph=True)\n"
        "    (g * g).backward()\n"
    )
    assert trace.calls.count == 120
    graph = trace.at_call(None).graph  # the last pair: g's graph, built by call 119
    assert {n.made_by for n in graph.nodes} - {None} == {119}
    assert all(r.create_graph == (i % 2 == 0) for i, r in enumerate(trace.backward))


def test_a_hessian_s_own_passes_mark_the_nodes_they_built_with_the_call():
    trace = _run(HESSIAN)
    graph = trace.graph
    tensors = {graph.tensor_info(n.tensor).name: n.made_by for n in graph.nodes if n.tensor}
    assert tensors == {"x": None, "H": BY_HESSIAN, "s": None}
    made = {}
    for n in graph.nodes:
        if n.kind == "function":
            made.setdefault(n.made_by, []).append(n.title)
    # 3·x²·upstream for each pass of the inner jacobian, then 6·x·... of the outer one,
    # the rows stacked: all built by hessian's passes; s = H.sum() and the views torch made
    # of x for the function to run on are not
    assert sorted(made[BY_HESSIAN]) == sorted(
        ["ViewBackward0", "StackBackward0", "ViewBackward0", "ViewBackward0"]
        + ["MulBackward0", "MulBackward1", "PowBackward0"] * 2
    )
    assert sorted(made[None]) == ["SumBackward0", "ViewBackward0", "ViewBackward0"]
    assert set(made) == {None, BY_HESSIAN}


def test_the_backward_from_a_hessian_walks_the_nodes_its_passes_built():
    trace = _run(HESSIAN)
    assert trace.calls.count == 1  # hessian's own passes are not the program's calls
    call = trace.at_call(None)
    made = _made_by(call.graph)
    steps = [made.get(s.node) for s in call.backward[0].steps]
    assert steps[0] is None and steps[1:11] == [BY_HESSIAN] * 10
    assert set(steps[11:]) == {None}  # the function's views of x, x's AccumulateGrad
    assert call.tensor("x").grad == [6.0, 6.0]  # d(sum of diag(6x))/dx


def test_vjp_with_create_graph_marks_the_vjp_not_the_function_s_output():
    trace = _run(
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "out, v = torch.autograd.functional.vjp(lambda t: t ** 3, x, torch.ones(2), "
        "create_graph=True)\n"
    )
    graph = trace.graph
    tensors = {graph.tensor_info(n.tensor).name: n.made_by for n in graph.nodes if n.tensor}
    assert tensors == {"x": None, "out": None, "v": "vjp's backward passes at line 2"}


def test_jacobian_and_vjp_without_create_graph_leave_nothing_to_mark():
    trace = _run(
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "J = torch.autograd.functional.jacobian(lambda t: t ** 3, x)\n"
        "out, v = torch.autograd.functional.vjp(lambda t: t ** 3, x, torch.ones(2))\n"
        "H = torch.autograd.functional.hessian(lambda t: (t ** 3).sum(), x)\n"
        "print(J.requires_grad, out.requires_grad, v.requires_grad, H.requires_grad)\n"
        "(x * 2).sum().backward()\n"
    )
    assert trace.stdout == ["False False False False"]  # detached: no graph at all
    for graph in [trace.graph] + [c.graph for c in trace.calls.kept]:
        assert all(n.made_by is None for n in graph.nodes)
