"""`class Net(nn.Module)`: the tutorial's and the lessons' own modules, run as written.

Each program is run by gradviz's interpreter and by real Python with real PyTorch in this
test (trusted test text: `exec` of the test's own programs, never the product's); what
they print (outputs, gradients, parameter names) must be the same.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

TUTORIAL_NET = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1) # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

net = Net()
"""

TUTORIAL_RUN = (
    TUTORIAL_NET
    + """\
inputs = torch.randn(4, 3, 32, 32)
labels = torch.tensor([1, 0, 3, 9])
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
optimizer.zero_grad()
outputs = net(inputs)
loss = criterion(outputs, labels)
loss.backward()
print(outputs)
print(loss)
for name, p in net.named_parameters():
    print(name, p.shape, p.grad.sum())
optimizer.step()
print(net.fc3.bias)
print(net)
"""
)

DEVICE_LESSON = """\
class UserDefinedModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(10, 1)
    def forward(self, x):
        return self.linear(x)
model = UserDefinedModel()
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
model.to(device)
print(next(model.parameters()).device)
"""


def python_printed(source: str, seed: int = 0) -> list[str]:
    env: dict = {"torch": torch, "F": F, "nn": nn}
    out = io.StringIO()
    with torch.random.fork_rng(), contextlib.redirect_stdout(out):
        torch.manual_seed(seed)
        exec(compile(source, "<test>", "exec"), env)
    return out.getvalue().splitlines()


def gradviz_printed(source: str, **options) -> list[str]:
    options.setdefault("simulate_cuda", False)
    trace = run_program(source, RunOptions(**options))
    assert trace.error is None, trace.error
    return "\n".join(trace.stdout).splitlines()


def test_tutorial_net_matches_pytorch():
    assert gradviz_printed(TUTORIAL_RUN) == python_printed(TUTORIAL_RUN)


def test_parameters_named_by_path_and_clustered():
    trace = run_program(TUTORIAL_RUN, RunOptions(simulate_cuda=False))
    names = {t.name for t in trace.tensors}
    assert {"net.fc1.weight", "net.conv1.bias", "net.fc3.bias"} <= names
    calls = trace.graph.modules
    top = [c for c in calls if c.kind == "Net"]
    assert len(top) == 1 and top[0].path == "net"
    inner = [c for c in calls if c.parent == top[0].id]
    assert [c.path for c in inner][:3] == ["net.conv1", "net.pool", "net.conv2"]


def test_device_lesson_on_simulated_cuda():
    printed = gradviz_printed(DEVICE_LESSON, simulate_cuda=True)
    assert printed == ["cuda:0"]


def test_device_lesson_on_cpu():
    assert gradviz_printed(DEVICE_LESSON) == ["cpu"]


NESTED = """\
class Block(nn.Module):
    def __init__(self, n, scale=2.0):
        super(Block, self).__init__()
        self.fc = nn.Linear(n, n)
        self.scale = scale
        self.layers = nn.ModuleList([nn.Linear(n, n) for i in range(2)])
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.helper(self.fc(x))
    def helper(self, y):
        return torch.tanh(y) * self.scale

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(3)
        self.head = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    def forward(self, x):
        return self.head(self.block(x))

m = Model()
x = torch.randn(5, 3)
y = m(x).sum()
y.backward()
print(y)
print([n for n, p in m.named_parameters()])
print(m.block.fc.weight.grad)
print(m.training, m.eval().training, len(m.state_dict()))
opt = torch.optim.Adam(m.parameters(), lr=0.1)
opt.step()
m.zero_grad()
print(m.block.fc.weight.grad, m(x).sum())
"""


def test_nested_modules_helpers_and_optimizer_match_pytorch():
    assert gradviz_printed(NESTED) == python_printed(NESTED)


def test_module_without_forward_is_pytorchs_message():
    source = "class A(nn.Module):\n    pass\na = A()\ny = a(torch.ones(2))"
    trace = run_program(source, RunOptions(simulate_cuda=False))
    assert trace.error is not None and 'missing the required "forward"' in trace.error.message
    assert (trace.error.line, trace.error.col) == (4, 5)


def test_device_mixing_in_forward_names_the_forward_line():
    source = DEVICE_LESSON + "y = model(torch.ones(10))\n"
    trace = run_program(source, RunOptions(simulate_cuda=True))
    assert trace.error is not None
    assert trace.error.line == 6  # return self.linear(x)
    assert "line 11" in (trace.error.hint or "")


@pytest.mark.parametrize(
    ("source", "kind", "line", "col", "words"),
    [
        (
            "class A(torch.Tensor):\n    pass",
            "forbidden",
            1,
            9,
            "nn.Module, torch.utils.data.Dataset, `object`",
        ),
        ("class A(nn.Module):\n    x = 1", "forbidden", 2, 5, "methods"),
        ("class A(nn.Module):\n    def __repr__(self):\n        return 1", "forbidden", 2, 5, "_"),
        ("def f():\n    class A(nn.Module):\n        pass", "forbidden", 2, 5, "top level"),
        (
            "class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.me = self\na = A()",
            "type",
            4,
            9,
            "itself",
        ),
        (
            "class A(nn.Module):\n    def __init__(self):\n        self.fc = nn.Linear(2, 2)\n"
            "a = A()",
            "type",
            3,
            9,
            "before Module.__init__",
        ),
        (
            "class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "    def forward(self, x):\n        return self(x)\na = A()\ny = a(1)",
            "limit",
            5,
            16,
            "deep",
        ),
    ],
)
def test_refusals_with_line_and_column(source, kind, line, col, words):
    trace = run_program(source, RunOptions(simulate_cuda=False))
    err = trace.error
    assert err is not None and err.kind == kind, err
    assert (err.line, err.col) == (line, col), err
    assert words in err.message


PARAMETER_NET = """\
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
        self.b = nn.Parameter(torch.zeros(1), requires_grad=False)
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        return self.lin(x * self.w) + self.b

net = Scale()
print([n for n, p in net.named_parameters()])
print([p.requires_grad for p in net.parameters()])
x = torch.ones(2, 3)
out = net(x).sum()
out.backward()
print(net.w.grad)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
opt.step()
print(net.w)
print(isinstance(net.w, torch.Tensor), net.w.is_leaf)
"""


def test_nn_parameter_is_registered_and_matches_pytorch():
    assert gradviz_printed(PARAMETER_NET) == python_printed(PARAMETER_NET)
    trace = run_program(PARAMETER_NET, RunOptions(simulate_cuda=False, classic=False))
    names = {t.name for t in trace.tensors}
    assert {"net.w", "net.b", "net.lin.weight"} <= names  # named by path in the graph
    w = trace.tensor("net.w")
    assert w.is_leaf and w.requires_grad and w.grad is not None
    assert [n.title for n in trace.graph.nodes if n.title == "net.w"] == ["net.w"]


IMPORTED_PARAMETER = (
    PARAMETER_NET.replace("nn.Parameter(", "Parameter(").replace(
        "class Scale",
        "from torch.nn import Parameter\nfrom torch.nn import Parameter as P\n\nclass Scale",
    )
    + "print(P(torch.ones(2)).requires_grad)\n"
)


def test_nn_parameter_imported_by_name_runs_as_in_pytorch():
    """`from torch.nn import Parameter` (and `as P`), as tutorials write it."""
    assert "from torch.nn import Parameter" in IMPORTED_PARAMETER
    assert gradviz_printed(IMPORTED_PARAMETER) == python_printed(IMPORTED_PARAMETER)
    trace = run_program(IMPORTED_PARAMETER, RunOptions(simulate_cuda=False, classic=False))
    assert trace.error is None, trace.error
    assert {"net.w", "net.b"} <= {t.name for t in trace.tensors}
    err = run_program("from torch.nn import Parameter\nw = Parameter(3)").error
    assert (err.kind, err.line, err.col) == ("type", 2, 5) and "not int" in err.message


def test_nn_parameter_gradient_check_passes():
    from gradviz.program.gradcheck import check_gradients

    source = PARAMETER_NET.split("out.backward()")[0]
    trace = run_program(source, RunOptions(simulate_cuda=False, backward="out"))
    shown = {t.name: t.grad for t in trace.tensors if t.is_leaf and t.requires_grad}
    assert set(shown) == {"net.w", "net.lin.weight", "net.lin.bias"}
    result = check_gradients(source, "out", shown)
    assert result.ok, result.message


@pytest.mark.parametrize(
    ("source", "line", "col", "words"),
    [
        ("w = nn.Parameter(3)", 1, 5, "nn.Parameter wraps a tensor, not int"),
        ("w = nn.Parameter([1.0, 2.0])", 1, 5, "not list"),
        ("w = nn.Parameter(torch.tensor([1, 2]))", 1, 5, "floating point"),
        ("w = nn.Parameter(torch.ones(2), requires_grad=1)", 1, 5, "True or False"),
        ("w = nn.Parameter(torch.ones(2), grad=True)", 1, 5, "requires_grad="),
        (
            "class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.w = nn.Parameter(2.5)\na = A()",
            4,
            18,
            "not float",
        ),
        (
            "class A(nn.Module):\n    def __init__(self):\n"
            "        self.w = nn.Parameter(torch.ones(2))\na = A()",
            3,
            9,
            "cannot assign parameters before Module.__init__",
        ),
        (
            "class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.w = nn.Parameter(torch.ones(2))\n        self.w = torch.ones(2)\na = A()",
            5,
            9,
            "cannot assign 'tensor' as parameter 'w'",
        ),
    ],
)
def test_nn_parameter_refusals_with_line_and_column(source, line, col, words):
    trace = run_program(source, RunOptions(simulate_cuda=False))
    err = trace.error
    assert err is not None and err.kind == "type", err
    assert (err.line, err.col) == (line, col), err
    assert words in err.message, err.message


DOTTED_BASES = """\
import torch.utils.data as data
class Squares(torch.utils.data.Dataset):
    def __init__(self, n):
        super().__init__()
        self.n = n
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        return torch.tensor([float(i)]), i * i
class Fewer(Squares):
    def __len__(self):
        return 2
class Pairs(data.Dataset):
    def __len__(self):
        return 1
    def __getitem__(self, i):
        return i
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(1, 1)
    def forward(self, x):
        return self.fc(x)
net = Net()
for xb, yb in torch.utils.data.DataLoader(Squares(4), batch_size=2):
    print(xb, yb, net(xb).shape)
print(len(Fewer(9)), Pairs()[0], isinstance(Fewer(1), torch.utils.data.Dataset))
print(isinstance(Pairs(), data.Dataset), isinstance(net, torch.nn.Module))
"""


def test_dotted_dataset_and_module_bases_match_pytorch():
    assert gradviz_printed(DOTTED_BASES) == python_printed(DOTTED_BASES)


@pytest.mark.parametrize(
    ("source", "line", "col"),
    [
        ("class A(torch.utils.data.TensorDataset):\n    pass", 1, 9),
        ("class A:\n    pass\nclass H:\n    Dataset = A\nclass D(H.Dataset):\n    pass", 5, 9),
    ],
)
def test_other_dotted_bases_are_refused_at_their_place(source, line, col):
    err = run_program(source, RunOptions(simulate_cuda=False)).error
    assert (err.kind, err.line, err.col) == ("forbidden", line, col), err
    assert "torch.utils.data.Dataset" in err.message


NESTED_AND_ALIASED = """\
import torch
import torch.nn as tnn
from torch import nn as mynn
class N(tnn.Module):
    def __init__(self):
        super().__init__()
        self.fc = tnn.Linear(2, 1)
    def forward(self, x):
        return self.fc(x)
class M(mynn.Module):
    def __init__(self):
        super().__init__()
        self.n = N()
        self.seq = torch.nn.Sequential(N(), tnn.ReLU())
    def forward(self, x):
        return self.seq(x) + self.n(x)
torch.manual_seed(0)
m = M()
print(m(torch.ones(1, 2)))
print(m)
print(m.n)
"""


def test_modules_inside_modules_print_their_class_names_and_aliased_bases_are_modules():
    from tests.same_as_python import printed, python_printed

    assert printed(NESTED_AND_ALIASED) == python_printed(NESTED_AND_ALIASED)
    assert "  (n): N(" in printed(NESTED_AND_ALIASED)
