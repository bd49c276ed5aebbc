"""Generator functions (`yield`, `yield from`): each program prints what CPython prints
for the same text, the generator running lazily as Python's does."""

from __future__ import annotations

import pytest

from tests.same_as_python import printed, python_printed, refused

D2L_LINEAR_REGRESSION = """import random
import torch
random.seed(0)
torch.manual_seed(0)

def synthetic_data(w, b, num_examples):
    X = torch.normal(0, 1, (num_examples, len(w)))
    y = torch.matmul(X, w) + b
    y += torch.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))

true_w = torch.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 1000)

def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]

batch_size = 10
for X, y in data_iter(batch_size, features, labels):
    print(X.shape, y.shape)
    break

w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)

def linreg(X, w, b):
    return torch.matmul(X, w) + b

def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()

lr = 0.03
num_epochs = 3
net = linreg
loss = squared_loss
for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)
        l.sum().backward()
        sgd([w, b], lr, batch_size)
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')
print(f'error in estimating w: {true_w - w.reshape(true_w.shape)}')
print(f'error in estimating b: {true_b - b}')
"""

WRAPPER = """import torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
ds = TensorDataset(torch.arange(12.0).reshape(6, 2), torch.arange(6))

class DataLoaderWrapper:
    def __init__(self, dl, func):
        self.dl = dl
        self.func = func

    def __len__(self):
        return len(self.dl)

    def __iter__(self):
        for b in self.dl:
            yield self.func(*b)

def preprocess(x, y):
    return x * 10, y + 1

dl = DataLoaderWrapper(DataLoader(ds, batch_size=4), preprocess)
print(len(dl))
for x, y in dl:
    print(x.tolist(), y.tolist())
"""

SAME = {
    "count-and-list": """
def count(n):
    i = 0
    while i < n:
        yield i
        i += 1
print(list(count(4)), list(count(0)))
""",
    "next-and-default": """
def two():
    yield 'a'
    yield 'b'
g = two()
print(next(g), next(g), next(g, 'end'), next(g, None))
""",
    "lazy-start": """
def noisy():
    print('start')
    yield 1
    print('middle')
    yield 2
g = noisy()
print('made')
print(next(g))
print('between')
print(next(g))
""",
    "break-stops-producer": """
def producer():
    for i in range(5):
        print('making', i)
        yield i
        print('after', i)
    print('never here')
for v in producer():
    print('got', v)
    if v == 1:
        break
print('done')
""",
    "return-ends": """
def upto(n):
    for i in range(100):
        if i == n:
            return
        yield i
    print('not reached')
print(list(upto(3)))
""",
    "return-value-through-yield-from": """
def inner():
    yield 1
    yield 2
    return 'inner done'
def outer():
    r = yield from inner()
    print('inner said', r)
    yield 3
print(list(outer()))
""",
    "yield-from-list-and-range": """
def chain(*seqs):
    for s in seqs:
        yield from s
print(list(chain([1, 2], range(3), 'ab', (9,))))
""",
    "nested-generators": """
def numbers(n):
    for i in range(n):
        yield i
def squares(xs):
    for x in xs:
        yield x * x
def evens(xs):
    for x in xs:
        if x % 2 == 0:
            yield x
print(list(evens(squares(numbers(7)))))
""",
    "zip-enumerate-sum": """
def count(n):
    for i in range(n):
        yield i
for i, (a, b) in enumerate(zip(count(3), count(10)), 1):
    print(i, a, b)
print(sum(count(5)), sum(count(3), 10), max(count(4)), sorted(count(3), reverse=True))
""",
    "tuple-set-dict-from-generator": """
def pairs():
    yield 'a', 1
    yield 'b', 2
print(tuple(pairs()), dict(pairs()), set(x for x, _ in pairs()) == {'a', 'b'})
""",
    "infinite-with-break": """
def naturals():
    n = 0
    while True:
        yield n
        n += 1
for n in naturals():
    if n * n > 50:
        break
print(n)
""",
    "fibonacci": """
def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b
g = fib()
print([next(g) for _ in range(10)])
""",
    "yield-none-and-assign": """
def g():
    x = yield
    print('x is', x)
    y = yield 5
    print('y is', y)
print(list(g()))
""",
    "closure-and-state": """
def make(step):
    def gen(n):
        total = 0
        for i in range(n):
            total += step
            yield total
    return gen
print(list(make(3)(4)))
""",
    "generator-in-plain-class": """
class Bag:
    def __init__(self, items):
        self.items = items
    def __iter__(self):
        for x in self.items:
            yield x * 2
    def pairs(self):
        yield from zip(self.items, self.items[1:])
b = Bag([1, 2, 3])
print(list(b), list(b.pairs()), sum(b))
for v in b:
    print(v)
""",
    "generator-in-module-class": """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 3)
        self.b = nn.Linear(3, 1)
    def __iter__(self):
        yield self.a
        yield self.b
    def forward(self, x):
        for layer in self:
            x = layer(x)
        return x
net = Stack()
print([m.out_features for m in net])
print(net(torch.ones(1, 2)).shape)
""",
    "try-except-in-generator": """
def safe(xs):
    for x in xs:
        try:
            yield 10 // x
        except ZeroDivisionError:
            print('skip', x)
print(list(safe([1, 0, 5])))
""",
    "error-surfaces-in-consumer": """
def bad():
    yield 1
    raise ValueError('boom')
g = bad()
print(next(g))
try:
    next(g)
except ValueError as e:
    print('caught', e)
print(next(g, 'finished'))
""",
    "exhausted-raises-stopiteration": """
def one():
    yield 1
g = one()
next(g)
try:
    next(g)
except StopIteration:
    print('stop')
""",
    "iter-of-generator-is-itself": """
def count(n):
    for i in range(n):
        yield i
g = count(4)
it = iter(g)
print(next(it), next(g), list(it), list(g))
""",
    "each-call-a-new-generator": """
def count(n):
    for i in range(n):
        yield i
a = count(3)
b = count(3)
print(next(a), next(a), next(b))
""",
    "unpacking-a-generator": """
def three():
    yield 1
    yield 2
    yield 3
a, b, c = three()
first, *rest = three()
print(a, b, c, first, rest, [*three()], max(*three()))
""",
    "generator-over-dataloader": """
import torch
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(torch.arange(10.0), torch.arange(10) % 2)
def batches(loader, limit):
    for i, (x, y) in enumerate(loader):
        if i == limit:
            return
        yield x.sum().item(), y.tolist()
print(list(batches(DataLoader(ds, batch_size=3), 2)))
""",
    "continue-and-else": """
def g(xs):
    for x in xs:
        if x < 0:
            continue
        yield x
    else:
        yield 'end'
    n = 0
    while n < 2:
        n += 1
        yield n
    else:
        yield 'while end'
print(list(g([1, -2, 3])))
""",
    "any-all-stop-early": """
def loud(xs):
    for x in xs:
        print('check', x)
        yield x
print(any(x > 1 for x in [0, 2, 3]), any(loud([0, 2, 3])), all(loud([1, 0, 5])))
""",
    "global-and-nonlocal": """
calls = 0
def counter():
    global calls
    for i in range(3):
        calls += 1
        yield calls
print(list(counter()), calls)
""",
    "recursive-tree-walk": """
def walk(tree, depth=0):
    for key, sub in tree.items():
        yield depth, key
        yield from walk(sub, depth + 1)
t = {'a': {'b': {}, 'c': {'d': {}}}, 'e': {}}
for d, k in walk(t):
    print('  ' * d + k)
""",
    "no-grad-decorator": """
import torch
@torch.no_grad()
def doubled(xs):
    for x in xs:
        yield x * 2
w = torch.ones(2, requires_grad=True)
for v in doubled([w]):
    print(v.requires_grad)
print((w * 2).requires_grad)
""",
    "generator-expressions-are-lazy": """
xs = [3, 8, 1, 9]
print(next(x for x in xs if x > 5), next((x for x in xs if x > 50), None))
g = (i * i for i in range(3))
print(next(g), list(g), list(g))
def loud(x):
    print('reading', x)
    return x
h = (loud(x) for x in xs)
print('made')
for v in h:
    if v > 5:
        break
print(list(h))
def scaled(n):
    return (i * n for i in range(3))
print(list(scaled(5)), sum(x * y for x in range(3) for y in range(4) if y))
""",
    "generator-expressions-into-torch": """
import torch
import torch.nn as nn
torch.manual_seed(0)
blocks = nn.ModuleList(nn.Linear(2, 2) for _ in range(3))
opt = torch.optim.SGD((p for p in blocks.parameters() if p.requires_grad), lr=0.1)
print(len(blocks), sum(p.numel() for p in blocks.parameters()))
print(' '.join(f'{x:.1f}' for x in [0.25, 1.5]), dict((k, len(k)) for k in ['ab', 'c']))
""",
    "in-reads-until-found": """
def loud(xs):
    for x in xs:
        print('gave', x)
        yield x
g = loud([1, 2, 3, 4])
print(2 in g, list(g), 9 in loud([1]), 'b' not in (c for c in 'abc'))
""",
    "repr-free-type-checks": """
def g():
    yield 1
a = g()
print(bool(g()), isinstance(list(g()), list), a == a, a == g(), a != a, a is a, [a].count(a))
""",
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_prints_what_python_prints(name):
    source = SAME[name]
    assert printed(source) == python_printed(source)


def test_d2l_linear_regression_from_scratch():
    """d2l's data_iter lesson, 3 epochs: the same losses as CPython with PyTorch."""
    got = printed(D2L_LINEAR_REGRESSION)
    assert got == python_printed(D2L_LINEAR_REGRESSION)
    assert [line.split(",")[0] for line in got[1:4]] == ["epoch 1", "epoch 2", "epoch 3"]


def test_wrapper_class_over_a_dataloader():
    assert printed(WRAPPER) == python_printed(WRAPPER)


def test_the_step_cap_stops_an_endless_generator_in_a_loop():
    source = "def endless():\n    while True:\n        yield 1\nfor v in endless():\n    pass\n"
    refused(source, "limit", 2, 5, "loop iterations")


def test_list_of_an_endless_generator_is_stopped_at_its_line():
    source = "def endless():\n    n = 0\n    while True:\n        yield n\n        n += 1\nx = list(endless())\n"
    refused(source, "limit", 3, 5, "loop iterations")


def test_a_generator_prints_as_the_interpreters_own_value():
    """Python adds the object's address; the interpreter's own value has none to give."""
    source = "def g():\n    yield 1\nprint(g())\nprint(x for x in [1])\n"
    assert printed(source) == ["<generator object g>", "<generator object <genexpr>>"]


def test_nothing_of_a_generators_body_runs_when_it_is_made():
    assert printed("def g():\n    print('ran')\n    yield 1\nx = g()\nprint('made')\n") == ["made"]


@pytest.mark.parametrize(
    ("source", "kind", "line", "col", "words"),
    [
        ("def f():\n    print((yield 1))\n    x = [(yield) for i in a]\n", "forbidden", 2, 12,
         "statement of its own"),
        ("yield 1\nyield 2\n", "syntax", 1, 1, "'yield' outside function"),
        ("def f():\n    try:\n        x = 1 + (yield)\n    finally:\n        yield 2\n",
         "forbidden", 3, 18, "has a `finally`"),
        ("def f():\n    return [(yield x) for x in range(3)]\n", "syntax", 2, 14,
         "'yield' inside list comprehension"),
        ("class A:\n    def __len__(self):\n        yield 1\n", "forbidden", 3, 9,
         "`__len__` cannot be a generator"),
    ],
)  # fmt: skip
def test_a_misplaced_yield_is_refused_first_in_the_source(source, kind, line, col, words):
    refused(source, kind, line, col, words)


def test_a_generator_expression_read_whole_is_planned_like_a_loop():
    """`sum(1 for b in loader)` reads every batch: refused before the first, as a `for` over
    the loader is; `next(...)` of the same generator reads one and runs."""
    loader = (
        "ds = torch.utils.data.TensorDataset(torch.zeros(300000, 1))\n"
        "l = torch.utils.data.DataLoader(ds, batch_size=1)\n"
    )
    refused(loader + "r = sum(1 for b in l)", "limit", 3, 5, "would run 300,000 loop passes")
    assert printed(loader + "first = next(b for b in l)\nprint(len(first))") == ["1"]
