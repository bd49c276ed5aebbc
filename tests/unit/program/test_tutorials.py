"""Programs from well-known tutorials run unmodified, and do what Python and PyTorch do.

Each program is run twice: by gradviz's interpreter, and by real Python with real PyTorch
in this test (trusted test code: `exec` of the test's own text, never the product's). What
it printed, and the values and gradients of the tensors it named, must be the same. The
lessons in shared/seeds/ are quoted where they use these constructs (003's device idiom,
002's dynamic graph and `%` formatting, 001's training-loop bookkeeping), with d2l's
control-flow example, a micrograd-style expression in tensor form and loops that
accumulate a loss.
"""

from __future__ import annotations

import contextlib
import io
import random

import pytest
import torch
import torch.nn.functional as F

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions, Trace


def python_run(source: str, seed: int = 0) -> tuple[list[str], dict]:
    """The program run by Python itself: printed lines and its variables (torch and Python's
    `random` seeded as a gradviz run seeds its own, and given their states back after)."""
    env: dict = {"torch": torch, "F": F}
    out = io.StringIO()
    outside = random.getstate()
    try:
        with torch.random.fork_rng(), contextlib.redirect_stdout(out):
            torch.manual_seed(seed)
            random.seed(seed)
            exec(compile(source, "<tutorial>", "exec"), env)
    finally:
        random.setstate(outside)
    return out.getvalue().splitlines(), env


def named(trace: Trace, name: str):
    """The latest tensor the program bound to `name` (an alias's too: "b[8] = c = d")."""
    found = [t for t in trace.tensors if name in t.label.split(" = ") or t.name == name]
    return found[-1] if found else None


def same_as_python(source: str, tensors: tuple[str, ...] = (), **options) -> Trace:
    """Run `source` both ways; the printed text and the named tensors' values and
    gradients must agree."""
    options.setdefault("simulate_cuda", False)
    trace = run_program(source, RunOptions(**options))
    assert trace.error is None, trace.error
    printed, env = python_run(source)
    assert trace.stdout == printed
    for name in tensors:
        info, expected = named(trace, name), env[name]
        assert info is not None, name
        assert info.shape == list(expected.shape), name
        if info.value is not None:  # large tensors carry a preview only
            got = torch.tensor(info.value, dtype=expected.dtype)
            assert torch.allclose(got, expected.detach()), name
        if expected.requires_grad and expected.is_leaf and expected.grad is not None:
            got = torch.tensor(info.grad, dtype=expected.dtype)
            assert torch.allclose(got, expected.grad, atol=1e-5), name
    return trace


# d2l.ai, "Automatic Differentiation", 2.5.4 Gradients and Python Control Flow
D2L_CONTROL_FLOW = """\
def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c
a = torch.randn(size=(), requires_grad=True)
d = f(a)
d.backward()
print(a.grad == d / a)
"""


def test_d2l_control_flow_example():
    trace = same_as_python(D2L_CONTROL_FLOW, ("a", "d"))
    assert trace.stdout == ["tensor(True)"]
    # the while loop's tensors are named with their pass on the graph
    labels = [t.label for t in trace.tensors]
    assert "b[0]" in labels and "b·L2" in labels
    assert trace.backward[-1].target == "d"


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_d2l_control_flow_both_branches(seed):
    trace = run_program(D2L_CONTROL_FLOW, RunOptions(seed=seed, simulate_cuda=False))
    printed, env = python_run(D2L_CONTROL_FLOW, seed)
    assert trace.error is None and trace.stdout == printed == ["tensor(True)"]
    assert trace.tensor("a").grad == pytest.approx(env["a"].grad.item(), rel=1e-6)


# shared/seeds/003: checking for CUDA, and the device idiom (the file's own tabs)
SEED_003_DEVICE = """\
import torch

if torch.cuda.is_available():
\tprint("CUDA available")
else:
\tprint("CPU only")

# 检查支持什么设备
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

# 把数据拷贝到适合的设备上
tensor1 = torch.randn(10, 10).to(device)
print(tensor1.device)

if torch.cuda.is_available():
  tensor = tensor1.cuda()
"""


def test_seed_003_device_idiom_without_cuda_is_pythons():
    trace = same_as_python(SEED_003_DEVICE, ("tensor1",))
    assert trace.stdout == ["CPU only", "cpu"]


def test_seed_003_device_idiom_answers_as_the_device_mode_does():
    """Under simulated CUDA torch.cuda.is_available() says True, as it does today."""
    trace = run_program(SEED_003_DEVICE, RunOptions(simulate_cuda=True))
    assert trace.error is None, trace.error
    assert trace.stdout == ["CUDA available", "cuda:0"]
    assert trace.tensor("tensor1").device == "cuda:0"
    assert named(trace, "tensor").device == "cuda:0"
    assert any("simulated CUDA" in note for note in trace.device_notes)


# shared/seeds/003: the CPU loop the lesson times (sizes made small; time.time is not here)
SEED_003_LOOP = """\
import torch

with torch.no_grad():
    tensor1 = torch.randn(10, 100, 100)
    tensor2 = torch.randn(10, 100, 100)

    result = tensor1 * tensor2
    for i in range(10):
        result = result + tensor1 * tensor2
print(result.shape, result.sum().item() > -1e9)
"""


def test_seed_003_loop_runs_and_names_each_pass():
    trace = same_as_python(SEED_003_LOOP, ("tensor1", "result"))
    labels = [t.label for t in trace.tensors if t.name == "result"]
    assert labels[:2] == ["result·L7", "result[0]"] and labels[-1] == "result[9]"


def test_seed_003_timing_import_runs():
    """`import time` was refused by name; the lesson's timing now runs (tests/unit/program/test_clocks.py
    holds the whole block and the note it earns)."""
    trace = run_program("import torch\nimport time\ntime_start = time.time()\n")
    assert trace.error is None, trace.error
    trace = run_program("import os\n")
    assert trace.error.kind == "forbidden" and "`os` is not available" in trace.error.message


# shared/seeds/002: the dynamic graph, `%` formatting and the conditional device
SEED_002 = """\
# 只有浮动张量有梯度
x = torch.arange(1,4, dtype=torch.float32, requires_grad=True)
print("X", x)
a = x + 2
b = a ** 2
c = b + 3
y = c.mean()
print("Y", y)
y.backward()
print(x.grad)
gpu_avail = torch.cuda.is_available()
print("Is the GPU available? %s" % str(gpu_avail))
device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
print("Device", device)
x = x.to(device)
print("X", x)
"""


def test_seed_002_dynamic_graph_and_formatting():
    trace = same_as_python(SEED_002, ("a", "b", "c", "y"))
    assert trace.stdout[3] == "Is the GPU available? False"
    assert trace.tensor("x").label == "x·L2" or trace.tensors[0].grad is not None


# shared/seeds/001: the tutorial's bookkeeping around its training loop, on random batches
SEED_001 = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
classes = ('plane', 'car', 'bird')
trainloader = [(torch.randn(4, 3), torch.randint(0, 3, (4,))) for _ in range(6)]
w = torch.zeros(3, 3, requires_grad=True)

for epoch in range(2):  # loop over the dataset multiple times

    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data[0].to(device), data[1].to(device)
        outputs = inputs @ w
        loss = F.cross_entropy(outputs, labels)
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()

        # print statistics
        running_loss += loss.item()
        if i % 2 == 1:    # print every 2 mini-batches
            print('[%d, %5d] loss: %.3f' %
                  (epoch + 1, i + 1, running_loss / 2))
            running_loss = 0.0

print('Finished Training')

correct = 0
total = 0
with torch.no_grad():
    for data in trainloader:
        images, labels = data
        outputs = images @ w
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()

print('Accuracy of the network on the %d test images: %d %%' % (total,
    100 * correct / total))

class_correct = list(0. for i in range(3))
class_total = list(0. for i in range(3))
with torch.no_grad():
    for data in trainloader:
        images, labels = data
        outputs = images @ w
        _, predicted = torch.max(outputs, 1)
        c = (predicted == labels).squeeze()
        for i in range(4):
            label = labels[i]
            class_correct[label] += c[i].item()
            class_total[label] += 1


for i in range(3):
    if class_total[i]:
        print('Accuracy of %5s : %2d %%' % (
            classes[i], 100 * class_correct[i] / class_total[i]))
"""


def test_seed_001_training_bookkeeping():
    trace = same_as_python(SEED_001, ("w",))
    assert trace.stdout[0].startswith("[1,     2] loss: ")
    assert "Finished Training" in trace.stdout
    assert any(line.startswith("Accuracy of  bird : ") for line in trace.stdout)
    loss_labels = [t.label for t in trace.tensors if t.name == "loss"]
    assert loss_labels[0] == "loss[0,0]" and loss_labels[-1] == "loss[1,5]"


# micrograd's README expression, in tensor form, and a neuron written with zip and sum
MICROGRAD = """\
a = torch.tensor(-4.0, requires_grad=True)
b = torch.tensor(2.0, requires_grad=True)
c = a + b
d = a * b + b**3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g = g + 10.0 / f
print(f'{g.item():.4f}')
g.backward()
print(f'{a.grad.item():.4f}', f'{b.grad.item():.4f}')

def neuron(xs, ws, bias, act=lambda v: v.tanh()):
    return act(sum((x * w for x, w in zip(xs, ws)), bias))

xs = [torch.tensor(v) for v in (2.0, 0.0)]
ws = [torch.tensor(v, requires_grad=True) for v in (-3.0, 1.0)]
bias = torch.tensor(6.8813735870195432, requires_grad=True)
o = neuron(xs, ws, bias)
o.backward()
print(round(o.item(), 4), [round(w.grad.item(), 4) for w in ws], round(bias.grad.item(), 4))
"""


def test_micrograd_expression_and_neuron():
    trace = same_as_python(MICROGRAD, ("a", "b", "g", "bias"))
    assert trace.stdout[0] == "24.7041"
    assert trace.stdout[1] == "138.8338 645.5773"
    assert trace.stdout[2] == "0.7071 [1.0, 0.0] 0.5"


# a loop that accumulates a loss, and gradient descent with it
LOSS_LOOP = """\
w = torch.zeros(3, requires_grad=True)
xs = torch.randn(8, 3)
ys = torch.randn(8)
history = []
for step in range(5):
    loss = 0
    for x, y in zip(xs, ys):
        pred = (w * x).sum()
        loss = loss + (pred - y) ** 2
    loss = loss / len(xs)
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad.zero_()
    history.append(loss.item())
    print(f"step {step}: loss {loss.item():.4f}")
assert all(later <= earlier for earlier, later in zip(history, history[1:]))
best = min(range(len(history)), key=lambda k: history[k])
print(best, len(history), sorted(history, reverse=True) == history)
"""


def test_loop_accumulating_a_loss():
    trace = same_as_python(LOSS_LOOP, ("w", "xs", "ys"))
    assert len(trace.stdout) == 6 and trace.stdout[-1] == "4 5 True"
    losses = [t.label for t in trace.tensors if t.name == "loss"]
    assert "loss·L10[4]" in losses  # the loss of the last pass, named with it


# the rest of the Python that tutorials write around tensors
PYTHON_AROUND_TENSORS = """\
def make_scale(k):
    def scale(t, times=1):
        return t * k * times
    return scale

double = make_scale(2)
t = torch.arange(4.0)
print(double(t), double(t, times=3), double(times=0.5, t=t))

def factorial(n):
    return 1 if n <= 1 else n * factorial(n - 1)
print(factorial(10), [factorial(k) for k in range(6) if k % 2 == 0])

squares = {k: k * k for k in range(5)}
for key, value in sorted(squares.items(), key=lambda kv: -kv[1]):
    if key == 3:
        continue
    if key == 1:
        break
    print(key, value)
else:
    print("not reached")

n = 0
while n < 10:
    n += 3
else:
    print("while ended at", n)

words = ["relu", "tanh", "sigmoid"]
print(", ".join(w.upper() for w in words), len(words), "tanh" in words, words[::-1])
print(f"{3.14159:8.3f}|{42:>5d}|{'x':^5}|{1e-3:.2e}|{7:b}|{'gradviz'!r}")
print("%-8s|%5.1f|%x|%r" % ("left", 2.25, 255, "s"), "%(a)s-%(b)d" % {"a": "k", "b": 3})
a, (b, c) = 1, [2, 3]
print(a < b < c, a < c < b, not a, a and c, 0 or b, None is None, b is not None)
print(any(x > 2 for x in [1, 2, 3]), all([]), max([3, 1, 2]), min(4, 2, key=lambda v: -v))
print(list(map(abs, [-1, 2, -3])), list(filter(None, [0, 1, 2])), divmod(7, 2), pow(2, 10))
print(isinstance(t, torch.Tensor), isinstance(1.5, (int, float)), isinstance("s", list))
print(int("42") + float("1.5"), str(3) + "!", bool([]), tuple(range(3)), dict(a=1))
rows = [row.sum().item() for row in torch.ones(3, 2)]
print(rows, list(reversed(rows)), list(enumerate("ab", 1)))
items = [1, 2]
items += [3]
items.extend([4, 5])
items.insert(0, 0)
print(items.pop(), items.index(2), items.count(1), items)
table = {}
table["loss"] = [0.5]
table["loss"].append(0.25)
table.setdefault("acc", []).append(1.0)
print(table, table.get("missing", "none"), list(table.keys()))
import math
print(math.sqrt(16.0), math.floor(2.7), round(math.pi, 3), math.isclose(0.1 + 0.2, 0.3))
"""


def test_python_around_tensors():
    same_as_python(PYTHON_AROUND_TENSORS, ("t",))


def test_assert_fails_at_its_line_as_an_assertion_error():
    trace = run_program("x = torch.ones(2)\nassert x.sum() == 3, 'sum is ' + str(x.sum().item())\n")
    err = trace.error
    assert (err.kind, err.line, err.col) == ("runtime", 2, 1)
    assert err.message == "AssertionError: sum is 2.0"
    assert err.details.exception == "AssertionError"
    bare = run_program("a = 1\nassert a > 2\n").error
    assert bare.message == "AssertionError: `a > 2` is false" and bare.line == 2


# ---------------------------------------------------------------- layers in the grown language

TRAINING_LOOP = """import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(16, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
loader = DataLoader(TensorDataset(x, y), batch_size=4)
net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
opt = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
count = sum(p.numel() for p in net.parameters())
print('parameters: %d, layers: %d' % (count, len(net)))
for epoch in range(3):
    running = 0.0
    for i, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        loss = nn.MSELoss()(net(xb), yb)
        loss.backward()
        opt.step()
        running += loss.item()
    print(f'epoch {epoch + 1}: loss {running / len(loader):.5f}')
first = next(iter(loader))[0]
w = next(net.parameters())
"""


def test_a_training_loop_with_a_loader_runs_as_in_pytorch():
    """Imports of classes, `for` over a DataLoader and a layer's parameters, enumerate() of
    batches, len() and next(iter(...)): the same printed losses and weights as PyTorch."""
    trace = same_as_python(TRAINING_LOOP, ("first", "w"))
    assert trace.stdout[0] == "parameters: 41, layers: 3"
    assert len(trace.stdout) == 4


def test_iter_and_next_take_only_the_programs_own_objects():
    for source, words in (
        ("i = iter(5)", "loop over it with `for`"),
        ("n = next([1])", "iterator from iter()"),
        ("from torch.utils.data import random_split", "not available"),
        ("from torch.utils.data import DataLoader\nD = DataLoader", "cannot hold"),
    ):
        trace = run_program(source, RunOptions(classic=False))
        assert trace.error is not None and words in trace.error.message, (source, trace.error)
        assert trace.error.line >= 1 and trace.error.col >= 1
