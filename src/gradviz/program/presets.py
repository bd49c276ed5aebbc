"""Ready-made programs: the lesson, common patterns and the classic mistakes.

Each preset says which tensor to run backward on and, for the mistakes, which of
gradviz.program.results.explain's explanations its error is (tests check both against PyTorch).
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


SGD_LOOP = (
    "torch.manual_seed(0)\n"
    "x = torch.randn(16, 1)\n"
    "y = 3 * x + 1\n"
    "w = torch.zeros(1, requires_grad=True)\n"
    "b = torch.zeros(1, requires_grad=True)\n"
    "opt = torch.optim.SGD([w, b], lr=0.1)\n"
    "for step in range(3):\n"
    "{clear}"
    "    loss = ((x * w + b - y) ** 2).mean()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "    print(step, loss.item(), w.grad)\n"
)


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
    Preset(
        "tutorial_net",
        "The PyTorch tutorial's Net: class Net(nn.Module)",
        "The CIFAR-10 tutorial's convolutional network, as written: the program's own class, "
        "its layers registered by name (net.fc1.weight), its forward one cluster on the graph "
        "holding each layer's call. Forward and backward on a real CIFAR-10 batch of 4: "
        "gradviz_cifar10_sample(4) gives 4 real CIFAR-10 test images (cat, ship, ship, "
        "plane) shipped with gradviz, normalised as the tutorial's transform does, standing "
        "in for its torchvision loader (a program cannot read files).",
        "import torch.nn as nn\n"
        "torch.manual_seed(0)\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv1 = nn.Conv2d(3, 6, 5)\n"
        "        self.pool = nn.MaxPool2d(2, 2)\n"
        "        self.conv2 = nn.Conv2d(6, 16, 5)\n"
        "        self.fc1 = nn.Linear(16 * 5 * 5, 120)\n"
        "        self.fc2 = nn.Linear(120, 84)\n"
        "        self.fc3 = nn.Linear(84, 10)\n"
        "\n"
        "    def forward(self, x):\n"
        "        x = self.pool(F.relu(self.conv1(x)))\n"
        "        x = self.pool(F.relu(self.conv2(x)))\n"
        "        x = torch.flatten(x, 1) # flatten all dimensions except batch\n"
        "        x = F.relu(self.fc1(x))\n"
        "        x = F.relu(self.fc2(x))\n"
        "        x = self.fc3(x)\n"
        "        return x\n"
        "\n"
        "net = Net()\n"
        "# the tutorial's CIFAR10 loader reads files: a built-in sample of real images stands in\n"
        "images, labels = gradviz_cifar10_sample(4)\n"
        "classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')\n"
        "print(' '.join(f'{classes[labels[j]]:5s}' for j in range(4)))\n"
        "temperature = torch.tensor(1.0, requires_grad=True)\n"
        "outputs = net(images)\n"
        "loss = F.cross_entropy(outputs / temperature, labels)\n",
        backward="loss",
    ),
    Preset(
        "user_module_device",
        "Your own module on the GPU: model.to(device)",
        "The lesson's device idiom with a user-defined module: model.to(device) moves its "
        "registered parameters (simulated CUDA where there is no GPU), and the input must "
        "follow them.",
        "torch.manual_seed(0)\n"
        "class UserDefinedModel(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.linear = torch.nn.Linear(10, 1)\n"
        "    def forward(self, x):\n"
        "        return self.linear(x)\n"
        "model = UserDefinedModel()\n"
        'device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")\n'
        "model.to(device)\n"
        "print(next(model.parameters()).device)\n"
        "x = torch.randn(8, 10, requires_grad=True)\n"
        "out = model(x.to(device)).mean()\n",
        backward="out",
    ),
    Preset(
        "control_flow",
        "Control flow: d2l's f(a)",
        "From Dive into Deep Learning: a while loop and an if decide how the output is made, "
        "and the gradient still follows: f is linear in a, so a.grad == d / a.",
        "def f(a):\n"
        "    b = a * 2\n"
        "    while b.norm() < 1000:\n"
        "        b = b * 2\n"
        "    if b.sum() > 0:\n"
        "        c = b\n"
        "    else:\n"
        "        c = 100 * b\n"
        "    return c\n"
        "\n"
        "torch.manual_seed(0)\n"
        "a = torch.randn(size=(), requires_grad=True)\n"
        "d = f(a)\n",
        backward="d",
    ),
    Preset(
        "sgd_loop",
        "An SGD loop with zero_grad()",
        "Three steps of gradient descent on a line: each step clears the gradients first, so "
        "w.grad is the gradient of this step's loss only.",
        SGD_LOOP.format(clear="    opt.zero_grad()\n"),
    ),
    Preset(
        "sgd_no_zero_grad",
        "The same loop without zero_grad(): gradients add up",
        "Without opt.zero_grad() every backward() adds to .grad: after three steps w.grad is "
        "the sum of three steps' gradients, and the steps grow.",
        SGD_LOOP.format(clear=""),
    ),
    Preset(
        "sequential_mlp",
        "An nn.Sequential MLP",
        "Two linear layers with a ReLU between them, one cluster per layer on the graph; the "
        "parameters are named by place: net.0.weight, net.2.bias.",
        "import torch.nn as nn\n"
        "torch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
        "x = torch.randn(5, 4, requires_grad=True)\n"
        "target = torch.tensor([0, 2, 1, 1, 0])\n"
        "loss = F.cross_entropy(net(x), target)\n",
        backward="loss",
    ),
    Preset(
        "attention_head",
        "One attention head: softmax(QKᵀ/√d)V",
        "Scaled dot-product attention by hand: queries, keys and values from one input, "
        "weights that sum to 1 over the keys; the gradient reaches all three projections.",
        "import math\n"
        "torch.manual_seed(0)\n"
        "x = torch.randn(4, 8)\n"
        "Wq = torch.randn(8, 8, requires_grad=True)\n"
        "Wk = torch.randn(8, 8, requires_grad=True)\n"
        "Wv = torch.randn(8, 8, requires_grad=True)\n"
        "q = x @ Wq\n"
        "k = x @ Wk\n"
        "v = x @ Wv\n"
        "weights = F.softmax(q @ k.T / math.sqrt(8), dim=-1)\n"
        "out = weights @ v\n"
        "loss = out.pow(2).mean()\n",
        backward="loss",
    ),
]

PRESETS_BY_KEY = {p.key: p for p in PRESETS}
