"""gradviz.program.interpreter.outputs: a bare expression at the top level of a program shows
its value as a notebook would (Python's repr, compared here with Python's own run of the same
text), None shows nothing, a tensor autograd made there is on the graph, and what is shown
stays within the output caps."""

from __future__ import annotations

import ast
import pickle

import torch
from torch import nn

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import (
    MAX_OUTPUT_LINE_CHARS,
    MAX_OUTPUT_LINES,
    MAX_SHOWN_CHARS,
)
from gradviz.program.results.reports import ShownValue
from gradviz.program.results.trace import RunOptions, Trace
from gradviz.util.plainsize import decoded_size

NOTEBOOK = """\
import torch
from torch import nn
x = torch.arange(4.0, requires_grad=True)
x.device
x.dtype
x.shape
x.size(0)
x * 2
Y = torch.tensor([[1, 2], [3, 4]])
Z = torch.ones(2, 2, dtype=torch.long)
Y + Z
Y == Z
x.sum()
len(Y)
3 / 4
"a" + "b"
[1, 2.5, "c"]
{"k": (1,)}
(Y.shape, Y.dtype)
torch.float64
x.requires_grad
nn.Linear(4, 2, bias=False).in_features
"""

# d2l's preliminaries (data manipulation, autograd), cell by cell
D2L = """\
import torch
x = torch.arange(12, dtype=torch.float32)
x
x.numel()
x.shape
X = x.reshape(3, 4)
X
torch.zeros((2, 3, 4))
torch.tensor([[2, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
X[-1], X[1:3]
x = torch.tensor([1.0, 2, 4, 8])
y = torch.tensor([2, 2, 2, 2])
x + y, x - y, x * y, x / y, x ** y
torch.exp(x)
Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
torch.cat((X, Y), dim=0), torch.cat((X, Y), dim=1)
X == Y
X.sum()
a = torch.arange(3).reshape((3, 1))
a
Y = Y + X
a = torch.tensor([3.5])
a, a.item(), float(a), int(a)
x = torch.arange(4.0)
x.requires_grad_(True)
x.grad
y = 2 * torch.dot(x, x)
y
y.backward()
x.grad
x.grad == 4 * x
x.grad.zero_()
y = x.sum()
y.backward()
x.grad
torch.cuda.device_count()
torch.device('cpu'), torch.device('cuda'), torch.device('cuda:1')
x.device
"""


def ok(source: str) -> Trace:
    trace = run_program(source)
    assert trace.error is None, trace.error
    return trace


def python_outs(source: str) -> list[tuple[int, str]]:
    """What IPython shows for the same text: each top-level bare expression's repr, when its
    value is not None (the test's own text, run by Python itself)."""
    tree = ast.parse(source)
    scope: dict = {"torch": torch, "nn": nn}
    shown = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr):
            expr = ast.Expression(stmt.value)
            value = eval(compile(expr, "<cell>", "eval"), scope)
            if value is not None:
                shown.append((stmt.lineno, repr(value)))
        else:
            exec(compile(ast.Module([stmt], []), "<cell>", "exec"), scope)
    return shown


def test_bare_expressions_show_what_python_shows():
    trace = ok(NOTEBOOK)
    assert [(s.line, s.text) for s in trace.shown] == python_outs(NOTEBOOK)
    shown = {s.line: s.text for s in trace.shown}
    assert shown[4] == "device(type='cpu')"
    assert shown[8] == "tensor([0., 2., 4., 6.], grad_fn=<MulBackward0>)"
    assert shown[11] == "tensor([[2, 3],\n        [4, 5]])"


def test_d2l_s_preliminaries_show_what_jupyter_shows():
    trace = run_program(D2L, RunOptions(simulate_cuda=False))  # this host's own devices
    assert trace.error is None, trace.error
    assert [(s.line, s.text) for s in trace.shown] == python_outs(D2L)
    assert len(trace.shown) == 23


def test_the_language_s_own_objects_show_what_they_are_not_where_they_live():
    source = (
        "net = torch.nn.Linear(2, 2)\n"
        "net.parameters()\n"
        "ds = torch.utils.data.TensorDataset(torch.ones(4, 2), torch.ones(4))\n"
        "ds\n"
        "dl = torch.utils.data.DataLoader(ds, batch_size=2)\n"
        "dl\n"
        "iter(dl)\n"
        "print(net.parameters(), dl)\n"
    )
    trace = ok(source)
    assert [s.text for s in trace.shown] == [
        "<generator object>",
        "<TensorDataset object>",
        "<DataLoader object>",
        "<DataLoader iterator object>",
    ]
    assert trace.stdout == ["<generator object> <DataLoader object>"]


def test_none_shows_nothing_as_in_a_notebook():
    source = (
        "net = nn.Linear(2, 1)\n"
        "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "loss = net(torch.ones(3, 2)).sum()\n"
        "opt.zero_grad()\n"
        "loss.backward()\n"
        "opt.step()\n"
        "print('printed')\n"
        "items = []\n"
        "items.append(1)\n"
        "None\n"
    )
    trace = ok(source)
    assert trace.shown == []
    assert trace.stdout == ["printed"]


def test_only_top_level_expressions_show_and_comments_do_not():
    source = (
        '"""A docstring is not an output."""\n'
        "x = torch.ones(2, requires_grad=True)\n"
        "def f(v):\n"
        "    v * 3\n"
        "    return v\n"
        "f(x)\n"
        "for i in range(2):\n"
        "    x + i\n"
        "if True:\n"
        "    x - 1\n"
        "with torch.no_grad():\n"
        "    x * 5\n"
        "...\n"
        "x + 10\n"
    )
    trace = ok(source)
    assert [s.line for s in trace.shown] == [6, 14]
    assert trace.shown[0].text == "tensor([1., 1.], requires_grad=True)"
    assert trace.shown[1].text == "tensor([11., 11.], grad_fn=<AddBackward0>)"
    assert [t.name for t in trace.tensors] == ["x", "_14"]  # the loop's x + i is not


def test_a_bare_net_call_is_on_the_graph_named_after_its_line():
    source = (
        "torch.manual_seed(0)\n"
        "X = torch.ones(2, 4)\n"
        "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
        "net(X)\n"
    )
    trace = ok(source)
    out = trace.tensor("_4")
    assert out is not None and out.line == 4 and not out.is_leaf
    assert out.shape == [2, 1]
    titles = {n.title for n in trace.graph.nodes}
    assert "AddmmBackward0" in titles and "_4" in {t.name for t in trace.graph.tensors}
    assert trace.shown[0].line == 4 and "grad_fn=<AddmmBackward0>" in trace.shown[0].text


def test_a_named_tensor_shown_bare_is_not_named_twice_and_backward_can_start_at_a_line():
    source = (
        "x = torch.ones(2, requires_grad=True)\n"
        "y = x * 2\n"
        "y\n"
        "torch.ones(2)\n"  # no grad_fn: shown, not on the graph
        "(x * 3).sum()\n"
    )
    trace = run_program(source, RunOptions(backward="_5"))  # the page's Run backward on it
    assert trace.error is None, trace.error
    assert [t.name for t in trace.tensors] == ["x", "y", "_5"]
    assert [s.line for s in trace.shown] == [3, 4, 5]
    assert trace.tensor("x").grad == [3.0, 3.0]
    assert trace.backward[-1].target == "_5"


def test_the_tensors_of_a_shown_tuple_are_on_the_graph_one_by_one():
    source = "x = torch.ones(2, requires_grad=True)\ny = x * 2\nx + 1, y, [x * 3]\n"
    trace = ok(source)
    assert [t.name for t in trace.tensors] == ["x", "y", "_3.0"]  # y is y; a list in it is not
    assert trace.tensor("_3.0").line == 3


def test_a_huge_repr_is_cut_short_and_all_shown_text_is_bounded():
    trace = ok("items = list(range(50000))\nitems\n")
    (shown,) = trace.shown
    assert len(shown.text) == MAX_OUTPUT_LINE_CHARS + 1 and shown.text.endswith("…")
    many = "items = list(range(50000))\n" + "items\n" * 40
    trace = ok(many)
    assert sum(len(s.text) for s in trace.shown) <= MAX_SHOWN_CHARS + len(trace.shown)
    assert len(trace.shown) < 40


def test_printed_lines_and_shown_values_share_the_output_cap():
    source = f"for i in range({MAX_OUTPUT_LINES}):\n    print(i)\n1 + 1\n"
    trace = ok(source)
    assert len(trace.stdout) == MAX_OUTPUT_LINES and trace.shown == []
    trace = ok("1 + 1\n" + f"for i in range({MAX_OUTPUT_LINES}):\n    print(i)\n")
    assert len(trace.shown) == 1 and len(trace.stdout) == MAX_OUTPUT_LINES - 1


def test_shown_values_are_plain_data_and_read_as_ipython_writes_them():
    trace = ok(NOTEBOOK)
    assert decoded_size(trace.shown) > 0  # plain data: crosses to the server
    again = pickle.loads(pickle.dumps(trace.shown))
    assert again == trace.shown
    assert ShownValue(5, "2.5").out() == "Out[5]: 2.5"
    assert ShownValue(5, "tensor([[1],\n        [2]])").out() == (
        "Out[5]:\ntensor([[1],\n        [2]])"
    )
    assert trace.to_json()["shown"][0] == {"line": 4, "text": "device(type='cpu')"}
