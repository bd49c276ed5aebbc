"""Ready-made programs: the lesson, common patterns and the classic mistakes.

Each preset says which tensor to run backward on and, for the mistakes, which of
gradviz.program.explain's explanations its error is (tests check both against PyTorch).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    key: str
    title: str
    about: str
    source: str
    backward: str | None = None  # the output to run backward on
    mistake: str | None = None  # explanation key the program's error must match


PRESETS: list[Preset] = [
    Preset(
        "lesson",
        "The lesson: y = mean((x + 2)² + 3)",
        "The dynamic graph from the lesson: after backward, x.grad = [2.0000, 2.6667, 3.3333] "
        "because dy/dx = 2(x + 2)/3.",
        "# Only floating-point tensors can have gradients\n"
        "x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)\n"
        "a = x + 2\n"
        "b = a ** 2\n"
        "c = b + 3\n"
        "y = c.mean()\n",
        backward="y",
    ),
    Preset(
        "linear_relu",
        "Linear layer with bias and ReLU",
        "h = relu(x @ Wᵀ + b): gradients flow to W and b, and only through the units that were "
        "active (ReLU passes the gradient where its input is positive).",
        "torch.manual_seed(0)\n"
        "x = torch.randn(4, 3)\n"
        "W = torch.randn(2, 3, requires_grad=True)\n"
        "b = torch.zeros(2, requires_grad=True)\n"
        "z = F.linear(x, W, b)\n"
        "h = F.relu(z)\n"
        "loss = h.sum()\n",
        backward="loss",
    ),
    Preset(
        "cross_entropy",
        "Softmax cross-entropy",
        "The gradient of cross-entropy with respect to the logits is softmax(logits) - "
        "one_hot(target), divided by the batch size.",
        "logits = torch.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]], requires_grad=True)\n"
        "target = torch.tensor([0, 1])\n"
        "probs = F.softmax(logits, dim=1)\n"
        "loss = F.cross_entropy(logits, target)\n",
        backward="loss",
    ),
    Preset(
        "broadcasting",
        "Broadcasting",
        "A (3,1) column plus a (1,4) row broadcasts to (3,4). In backward, each input's "
        "gradient is summed over the dimensions it was broadcast along.",
        "col = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=True)\n"
        "row = torch.tensor([[10.0, 20.0, 30.0, 40.0]], requires_grad=True)\n"
        "grid = col * row\n"
        "total = grid.sum()\n",
        backward="total",
    ),
    Preset(
        "detach_no_grad",
        "detach() and torch.no_grad()",
        "A detached tensor and one made under torch.no_grad() are cut out of the graph: no "
        "gradient flows through them, so w only gets the gradient of the tracked path.",
        "w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "tracked = w * 2\n"
        "frozen = (w * 10).detach()\n"
        "with torch.no_grad():\n"
        "    scale = w.sum()\n"
        "out = (tracked * frozen + scale).sum()\n",
        backward="out",
    ),
    Preset(
        "mistake_backward_twice",
        "Mistake: backward twice",
        "The second backward() finds the saved values freed by the first.",
        "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "y = (x ** 2).sum()\n"
        "y.backward()\n"
        "y.backward()\n",
        mistake="backward_twice",
    ),
    Preset(
        "mistake_inplace_leaf",
        "Mistake: in-place change to a leaf that requires grad",
        "Changing a parameter in place would destroy the point the gradient is taken at.",
        "w = torch.ones(3, requires_grad=True)\nw += 1\nloss = (w * 2).sum()\n",
        mistake="inplace_leaf",
    ),
    Preset(
        "mistake_no_grad",
        "Mistake: backward on a tensor that does not require grad",
        "Nothing in this program requires grad, so there is no graph to walk back through.",
        "x = torch.tensor([1.0, 2.0, 3.0])\ny = (x * 2).sum()\ny.backward()\n",
        mistake="no_grad_tensor",
    ),
    Preset(
        "mistake_non_scalar",
        "Mistake: backward on a non-scalar output",
        "backward() without a gradient needs a single-number output.",
        "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = x * 2\ny.backward()\n",
        mistake="implicit_scalar",
    ),
]

PRESETS_BY_KEY = {p.key: p for p in PRESETS}
