"""`import numpy as np` in the program language prints what CPython prints for the same
text: arrays, scalars and dtypes, seeded random numbers, conversions both ways, and small
numpy-only computations as tutorials write them."""

from __future__ import annotations

import pytest

from tests.same_as_python import printed, python_printed

N = "import numpy as np\n"

PROGRAMS = {
    "print-array": N + "a = np.array([1.5, 2.0, -3.25])\nprint(a)\nprint(repr(a))\nprint(a.dtype)",
    "print-matrix": N
    + "m = np.array([[1, 2, 3], [4, 5, 6]])\nprint(m)\nprint(m.shape, m.ndim, m.size)",
    "print-scalars": N
    + "a = np.array([0.1, 0.2], dtype=np.float32)\nprint(a[0], repr(a[0]), a.sum(), [a[1]])\n"
    "print(np.int64(3) + 1, np.float32(1.5) * 2, np.float64(0.1) + 0.2)",
    "print-dtypes": N
    + "print(np.zeros(2).dtype, np.arange(3).dtype, np.ones(2, dtype=np.float32).dtype)\n"
    "print(repr(np.zeros(2).dtype), np.float32, np.zeros(2, dtype=int).dtype == np.int64)\n"
    "print(np.array([True, False]).dtype, np.zeros(2, dtype='float32'))",
    "fstrings": N
    + "a = np.linspace(0, 1, 4)\nprint(f'{a}', f'{a[1]:.3f}', f'{a.mean():.2f}', f'{a!r}')\n"
    "print('mean={:.4f}'.format(a.mean()), str(a), '%.2f' % a[2])",
    "seeded-random": N
    + "np.random.seed(0)\nprint(np.random.rand(3))\nprint(np.random.randn(2, 2))\n"
    "print(np.random.randint(0, 10, size=5), np.random.randint(5))\n"
    "print(np.random.normal(0, 1, size=3), np.random.uniform(-1, 1, 2))",
    "seeded-permutation": N
    + "np.random.seed(42)\np = np.random.permutation(6)\nprint(p)\nnp.random.shuffle(p)\n"
    "print(p, np.random.choice(10, 3), np.random.choice([1, 2, 3], size=2, replace=False))\n"
    "items = [1, 2, 3, 4]\nnp.random.shuffle(items)\nprint(items, np.random.random(2))",
    "reseed-repeats": N
    + "np.random.seed(1)\na = np.random.rand(2)\nnp.random.seed(1)\nb = np.random.rand(2)\n"
    "print(a, b, np.array_equal(a, b), np.allclose(a, b))",
    "creation": N
    + "print(np.zeros((2, 3)), np.ones(3), np.full((2, 2), 7.5), np.eye(3), np.identity(2))\n"
    "print(np.arange(5), np.arange(1, 2, 0.25), np.linspace(0, 1, 5), np.zeros_like(np.eye(2)))\n"
    "print(np.ones_like([1, 2]), np.full_like(np.arange(3), 9), np.array(3.5), np.array([]))",
    "math": N
    + "x = np.array([0.5, 1.0, 2.0])\nprint(np.exp(x), np.log(x), np.sqrt(x), np.tanh(x))\n"
    "print(np.abs(-x), np.clip(x, 0.7, 1.5), np.maximum(x, 1.0), np.minimum(x, 1), np.square(x))\n"
    "print(np.where(x > 0.9, x, -1.0), np.isclose(x, 1.0), np.allclose(x, x + 1e-12))",
    "reductions": N + "m = np.array([[1.0, 5.0, 2.0], [4.0, 0.5, 3.0]])\n"
    "print(m.sum(), m.sum(axis=0), m.mean(axis=1), m.std(), np.std(m, axis=0))\n"
    "print(m.max(), np.max(m, axis=1), m.min(), np.argmax(m), m.argmax(axis=1), np.argmin(m))\n"
    "print(np.sum(m, axis=1, keepdims=True), m.prod(), np.mean(m), m.var(), np.median(m))",
    "elementwise-operators": N + "a = np.array([1.0, 2.0, 3.0])\nb = np.array([0.5, 4.0, 3.0])\n"
    "print(a + b, a - b, a * b, a / b, a // b, a % 2, a ** 2, 2 ** a, -a, +a)\n"
    "print(a > b, a == b, a != b, a <= 2, (a > 1) & (b > 1), ~(a > 1), 3.0 in a, 7 in a)",
    "matrix": N + "A = np.arange(6).reshape(2, 3)\nB = np.arange(6).reshape(3, 2)\n"
    "print(A @ B, np.dot(A, B), np.matmul(A, B), A.dot(B))\n"
    "v = np.array([1.0, 2.0, 3.0])\nprint(A @ v, v @ v, np.dot(v, v), np.outer(v, v))",
    "shape": N
    + "a = np.arange(12)\nb = a.reshape(3, 4)\nprint(b.T, b.T.shape, np.transpose(b).shape)\n"
    "print(b.reshape(-1, 6), b.flatten(), b.ravel(), np.expand_dims(a, 0).shape)\n"
    "print(np.concatenate([b, b]), np.concatenate([b, b], axis=1).shape, np.stack([a, a]).shape)\n"
    "print(np.vstack([a, a]).shape, np.hstack([a, a]).shape, b.squeeze().shape, len(b))",
    "astype": N
    + "a = np.array([1.7, -2.2, 3.9])\nprint(a.astype(int), a.astype(np.float32), a.astype('float16'))\n"
    "print(a.astype(np.int64).dtype, (a > 0).astype(float), np.array([1, 2], dtype=np.uint8))",
    "indexing": N
    + "m = np.arange(12).reshape(3, 4)\nprint(m[0], m[1, 2], m[:, 1], m[1:, ::2], m[-1])\n"
    "print(m[m > 5], m[[0, 2]], m[np.array([2, 0]), 1], m[..., 0], m[None, 0].shape)\n"
    "print(m[0][1], m[np.int64(1)], m[:2, np.newaxis].shape)",
    "assignment": N
    + "m = np.zeros((3, 3))\nm[0, 0] = 5\nm[1] = [1, 2, 3]\nm[:, 2] = 9\nm[m > 4] = -1\n"
    "m[2, 1] += 10\nv = m[0]\nv *= 2\nprint(m)\nm += 1\nprint(m)\na = np.arange(4)\n"
    "b = a\nb -= 1\nprint(a, b)",
    "iteration": N + "m = np.arange(6).reshape(2, 3)\nfor row in m:\n    print(row, row.sum())\n"
    "for x in np.array([1.5, 2.5]):\n    print(x, float(x), int(x))\n"
    "print(list(np.arange(3)), [float(v) for v in np.linspace(0, 1, 3)], sum(np.arange(4)))",
    "tolist-item": N
    + "m = np.arange(6).reshape(2, 3) / 2\nprint(m.tolist(), m[0, 1].item(), m.sum().item())\n"
    "print(np.array([7]).item(), float(np.array(2.5)), abs(np.array([-1, 2])), round(np.float64(1.256), 2), isinstance(m.tolist()[0][0], float))",
    "torch-from-numpy": N
    + "a = np.arange(6, dtype=np.float32).reshape(2, 3)\nt = torch.from_numpy(a)\n"
    "print(t, t.dtype)\na[0, 0] = 100\nprint(t)\nprint(torch.tensor(a), torch.tensor(np.arange(3)))",
    "tensor-numpy": N
    + "torch.manual_seed(0)\nx = torch.randn(2, 3)\nprint(x.numpy())\nn = x.numpy()\n"
    "print(n.dtype, n.shape, n[0, 0], repr(n[1, 2]))\n"
    "w = torch.ones(3, requires_grad=True)\nprint(w.detach().numpy(), np.asarray(x).sum() == x.sum().item())",
    "numpy-to-torch-and-back": N
    + "x = np.linspace(-1, 1, 5)\nt = torch.tensor(x, dtype=torch.float32)\ny = (t * 2).numpy()\n"
    "print(y, y.dtype, np.asarray(t), np.array(t) + 1)",
    "d2l-synthetic-data": N + "np.random.seed(0)\ntrue_w = np.array([2.0, -3.4])\ntrue_b = 4.2\n"
    "X = np.random.normal(0, 1, (100, 2))\ny = X @ true_w + true_b\n"
    "y += np.random.normal(0, 0.01, y.shape)\nprint(X[:2], y[:2], X.shape, y.shape)\n"
    "features = torch.from_numpy(X).float()\nlabels = torch.from_numpy(y).float().reshape(-1, 1)\n"
    "print(features[0], labels[0], features.dtype)",
    "numpy-linear-regression": N
    + "np.random.seed(1)\nX = np.random.rand(50, 1)\ny = 3 * X[:, 0] + 2 + 0.1 * np.random.randn(50)\n"
    "w, b, lr = 0.0, 0.0, 0.5\nfor epoch in range(200):\n    pred = w * X[:, 0] + b\n"
    "    err = pred - y\n    w -= lr * (2 * err * X[:, 0]).mean()\n    b -= lr * 2 * err.mean()\n"
    "    if epoch % 50 == 0:\n        print(epoch, round(float((err ** 2).mean()), 6))\n"
    "print(f'w={w:.3f} b={b:.3f}', repr(w), isinstance(w, float))",
    "normal-equations": N
    + "np.random.seed(3)\nX = np.hstack([np.ones((20, 1)), np.random.rand(20, 2)])\n"
    "w_true = np.array([1.0, 2.0, -1.0])\ny = X @ w_true\nXtX = X.T @ X\nprint(XtX.shape, np.round(XtX, 3))\n"
    "print(np.round(X.T @ y, 4), np.linalg.norm(w_true))",
    "softmax-and-onehot": N
    + "z = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])\ne = np.exp(z - z.max(axis=1, keepdims=True))\n"
    "p = e / e.sum(axis=1, keepdims=True)\nprint(p, p.sum(axis=1))\nlabels = np.array([2, 0])\n"
    "onehot = np.zeros((2, 3))\nonehot[np.arange(2), labels] = 1\nprint(onehot, -np.log(p[np.arange(2), labels]).mean())",
    "minibatches": N
    + "np.random.seed(0)\nX = np.arange(20).reshape(10, 2)\nidx = np.random.permutation(10)\n"
    "for i in range(0, 10, 4):\n    batch = X[idx[i:i + 4]]\n    print(batch.shape, batch[:, 0])",
    "numpy-module-name": "import numpy\nprint(numpy.ones(2), numpy.pi, numpy.e, numpy.inf, numpy.nan)\n"
    "print(numpy.float32(2) / 3, numpy.sqrt(2.0), numpy.exp(1.0), numpy.int64(7) // 2)",
    "tile-repeat-unique": N
    + "a = np.array([3, 1, 3, 2])\nprint(np.tile(a, 2), np.repeat(a, 2), np.unique(a), np.sort(a), np.argsort(a))\n"
    "print(np.cumsum(a), np.count_nonzero(a > 1), np.nonzero(a > 1), a.repeat(2).shape)",
    "kept-functions": N
    + "f = np.exp\nops = [np.sin, np.cos]\nprint(f(0.0), [g(0.0) for g in ops], np.float64(2.0) ** 0.5)\n"
    "dt = np.float32\nprint(np.zeros(2, dtype=dt), dt(1) / 3)",
    "scalars-in-python": N + "a = np.array([0.2, 0.9, 0.4])\nnames = ['cat', 'dog', 'bird']\n"
    "print(names[np.argmax(a)], names[a.argmax()])\nfor i in range(np.int64(2)):\n    print(i)\n"
    "print(np.float32(0.1) + 0.2, np.int64(7) / 2, 3 - np.float64(0.5))\n"
    "x = np.float64(2.0)\nx += 1\nprint(x, repr(x), max(a), min(a), sum(a), sorted(a))\n"
    "print([v * 2 for v in a], {int(k): float(v) for k, v in enumerate(a)})",
    "generator-draws": N + "rng = np.random.default_rng(0)\nprint(rng.normal(size=(3, 4)))\n"
    "print(rng.standard_normal(3), rng.standard_normal((2, 2)), rng.normal(5.0, 0.1))\n"
    "print(rng.integers(0, 10, size=5), rng.integers(5), rng.integers(1, 7, size=(2, 3)))\n"
    "print(rng.uniform(-1, 1, 3), rng.uniform(size=2), rng.random(), rng.random((2, 2)))\n"
    "print(rng.normal(np.zeros(3), 1.0), rng.uniform([0, 10], [1, 11]), rng.integers([1, 5], 9))",
    "generator-choice-permutation": N + "rng = np.random.default_rng(42)\n"
    "print(rng.choice(10, 3), rng.choice([1, 2, 3], size=2, replace=False))\n"
    "print(rng.choice(np.arange(6).reshape(3, 2), 2), rng.choice(5, size=3, p=[0.1, 0.2, 0.3, 0.2, 0.2]))\n"
    "p = rng.permutation(6)\nprint(p, rng.permutation(np.arange(4)))\nrng.shuffle(p)\n"
    "items = [1, 2, 3, 4]\nrng.shuffle(items)\nprint(p, items)",
    "generator-minibatches": N + "rng = np.random.default_rng(1)\nX = rng.normal(size=(8, 2))\n"
    "y = (X[:, 0] > 0).astype(int)\nidx = rng.permutation(len(X))\n"
    "for i in range(0, 8, 3):\n    b = idx[i:i + 3]\n    print(X[b].round(3), y[b])\n"
    "a = np.random.default_rng(7).random(2)\nb = np.random.default_rng(7).random(2)\n"
    "print(np.array_equal(a, b))",
    "linalg": N + "A = np.array([[2.0, 1.0], [1.0, 3.0]])\nb = np.array([1.0, 2.0])\n"
    "print(np.linalg.inv(A), np.linalg.solve(A, b), np.linalg.det(A), np.linalg.norm(b))\n"
    "print(np.linalg.solve(A, np.eye(2)), np.linalg.det(np.eye(3)), np.linalg.inv([[1, 2], [3, 4]]))\n"
    "print(np.linalg.det(np.stack([A, 2 * A])), np.allclose(A @ np.linalg.inv(A), np.eye(2)))\n"
    "print(np.linalg.norm(A), np.linalg.norm(A, axis=0))",
    "least-squares-normal-equations": N + "rng = np.random.default_rng(3)\n"
    "X = np.hstack([np.ones((20, 1)), rng.random((20, 2))])\nw_true = np.array([1.0, 2.0, -1.0])\n"
    "y = X @ w_true + 0.01 * rng.standard_normal(20)\nw = np.linalg.solve(X.T @ X, X.T @ y)\n"
    "print(np.round(w, 2), np.linalg.norm(w - w_true) < 0.1)",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_numpy_program_prints_what_python_prints(name):
    source = PROGRAMS[name]
    assert printed(source) == python_printed(source)


def test_enough_programs():
    assert len(PROGRAMS) >= 25
