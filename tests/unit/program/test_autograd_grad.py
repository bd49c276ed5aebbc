"""torch.autograd.grad, as PyTorch's autograd pages and seed 002 use it: gradients returned
rather than added to .grad, second derivatives with create_graph=True (their graph drawn with
the rest), several inputs at once; recorded as a backward call of the program."""

from __future__ import annotations

import pytest
from test_tutorials import same_as_python

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

SECOND_DERIVATIVE = """x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g)
g2 = torch.autograd.grad(g.sum(), x)[0]
print(g2, x.grad)
w = torch.randn(3, requires_grad=True)
z = (w * x).sum()
gw, gx = torch.autograd.grad(z, [w, x])
print(gw.shape, torch.equal(gx, w.detach()))
u = torch.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
print(u[1])
"""


def test_gradients_and_second_derivatives_print_what_python_prints():
    trace = same_as_python(SECOND_DERIVATIVE, ("g", "g2"))
    assert len(trace.backward) == 4  # each call recorded, as a backward call of the program
    assert trace.tensor("x").grad is None  # returned, not accumulated
    fns = [n.title for n in trace.graph.nodes if n.kind == "function"]
    # create_graph: the first derivative's own graph (3 * x**2: a second PowBackward0) is on
    # the drawing, beside y = x**3's
    assert fns.count("PowBackward0") == 2


def test_a_second_call_through_freed_values_is_pytorchs_error_explained():
    err = run_program(
        "x = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\n"
        "g = torch.autograd.grad(y, x)\nh = torch.autograd.grad(y, x)\n",
        RunOptions(classic=False),
    ).error
    assert err is not None and err.line == 4
    assert err.details.explanation == "backward_twice"


@pytest.mark.parametrize(
    ("source", "kind", "words"),
    [
        (
            "g = torch.autograd.grad(x.sum(), x, is_grads_batched=True)",
            "type",
            "not is_grads_batched",
        ),
        ("g = torch.autograd.grad(x.sum(), 'x')", "type", "each a tensor or a list of tensors"),
        ("g = torch.autograd.grad(x.sum(), x, x, False, False, False, 1)", "type", "too many"),
        ("f = torch.autograd.grad", "type", "call it"),
        ("b = torch.autograd.backward", "name", "not available"),
        ("g = torch.autograd.grad(x.sum(), torch.ones(2))", "runtime", "does not require grad"),
    ],
)
def test_autograd_grad_keeps_its_arguments(source, kind, words):
    err = run_program(
        "x = torch.ones(2, requires_grad=True)\n" + source, RunOptions(classic=False)
    ).error
    assert err is not None and err.kind == kind and words in err.message, err
    assert err.line == 2
