"""Tutorial programs timed side by side, in one run: plain Python with PyTorch executing
the file, against gradviz's interpreter (run_program in this process), each on one thread
with the same seed. The d2l linear regression (3 epochs of 100 minibatches), the makemore
MLP (100 steps), the same MLP trained for 1,000 steps, and the lecture's MLP at its own
sizes (32,033 names, made in the program as names.txt is not at hand; the dataset built by
the lecture's nested loop over 228k characters, C 27x10, W1 30x200, W2 200x27, minibatches
of 32, 1,000 steps).

Both sides print what the program prints; the outputs are checked equal, and the ratio
gradviz / Python is printed for each (the best of `--repeat` runs of each side). `--cpu`
times each side by the process's CPU time instead of the wall clock (on a shared machine,
what a busy neighbour does not change as much; both sides run on one thread).

    PYTHONPATH=src:. python bench/tutorial_speed.py [--repeat 1]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import random
import time
from pathlib import Path

import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import DEFAULT_LIMITS, Limits
from gradviz.program.results.trace import RunOptions

TUTORIALS = Path(__file__).resolve().parents[1] / "tests" / "tutorials"
SEED = 0
# the caps of every run; only the clock is widened, so that a slow machine still finishes
LIMITS = dataclasses.replace(DEFAULT_LIMITS, max_seconds=600.0)
# The lecture's sizes pass the default caps, which are widened for that program only: its
# run is about 1.2M statements and 8M steps, with 840k loop passes (the dataset, a list of
# 204,949 contexts, made by 257k of them), `"".join(words)` is 224,320 characters, and
# `Xtr[ix]` reads the whole 615k-value dataset at each of the 1,000 steps (the values
# computed in all). `loss.item()` is tracked in place of the lecture's `loss.log10().item()`.
LECTURE_LIMITS = dataclasses.replace(
    LIMITS,
    max_statements=5_000_000,
    max_steps=20_000_000,
    max_loop_iterations=2_000_000,
    max_container_length=1_000_000,
    max_total_items=20_000_000,
    max_string_length=1_000_000,
    max_total_elements=5_000_000_000,
)

LECTURE = """\
# Andrej Karpathy, "Building makemore Part 2: MLP", at the lecture's sizes: 32,033 names
# (made here, as names.txt is not at hand), block_size 3, C 27x10, W1 30x200, W2 200x27,
# minibatches of 32; 1,000 steps.
import random
import torch
import torch.nn.functional as F

random.seed(42)
letters = 'abcdefghijklmnopqrstuvwxyz'
words = []
for _ in range(32033):
    n = random.randint(2, 12)
    words.append(''.join(random.choice(letters) for _ in range(n)))
print(len(words), sum(len(w) for w in words))

chars = sorted(list(set(''.join(words))))
stoi = {s:i+1 for i,s in enumerate(chars)}
stoi['.'] = 0
itos = {i:s for s,i in stoi.items()}

block_size = 3 # context length: how many characters do we take to predict the next one?

def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + '.':
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix] # crop and append
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y

random.shuffle(words)
n1 = int(0.8*len(words))
n2 = int(0.9*len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])

g = torch.Generator().manual_seed(2147483647) # for reproducibility
C = torch.randn((27, 10), generator=g)
W1 = torch.randn((30, 200), generator=g)
b1 = torch.randn(200, generator=g)
W2 = torch.randn((200, 27), generator=g)
b2 = torch.randn(27, generator=g)
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters)) # number of parameters in total
for p in parameters:
    p.requires_grad = True

stepi = []
lossi = []

for i in range(1000):

    # minibatch construct
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)

    # forward pass
    emb = C[Xtr[ix]] # (32, 3, 10)
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1) # (32, 200)
    logits = h @ W2 + b2 # (32, 27)
    loss = F.cross_entropy(logits, Ytr[ix])

    # backward pass
    for p in parameters:
        p.grad = None
    loss.backward()

    # update
    lr = 0.1 if i < 100000 else 0.01
    for p in parameters:
        p.data += -lr * p.grad

    # track stats
    stepi.append(i)
    lossi.append(loss.item())

emb = C[Xdev] # (32, 3, 10)
h = torch.tanh(emb.view(-1, 30) @ W1 + b1) # (32, 200)
logits = h @ W2 + b2 # (32, 27)
loss = F.cross_entropy(logits, Ydev)
print(f'{loss.item():.4f}')
"""


def programs() -> list[tuple[str, str, Limits]]:
    linreg = (TUTORIALS / "d2l_linear_regression.py").read_text(encoding="utf-8")
    mlp = (TUTORIALS / "makemore_mlp.py").read_text(encoding="utf-8")
    assert mlp.count("for i in range(100):") == 1
    longer = mlp.replace("for i in range(100):", "for i in range(1000):")
    return [
        ("d2l linear regression, 3 epochs", linreg, LIMITS),
        ("makemore MLP, 100 steps", mlp, LIMITS),
        ("embedding MLP, 1,000 steps", longer, LIMITS),
        ("makemore MLP, lecture size", LECTURE, LECTURE_LIMITS),
    ]


CLOCK = time.perf_counter  # time.process_time with --cpu


def python_side(source: str) -> tuple[float, list[str]]:
    out = io.StringIO()
    outside = random.getstate()
    with torch.random.fork_rng(), contextlib.redirect_stdout(out):
        torch.manual_seed(SEED)
        random.seed(SEED)
        started = CLOCK()
        exec(compile(source, "<tutorial>", "exec"), {"__name__": "__main__"})
        took = CLOCK() - started
    random.setstate(outside)
    return took, out.getvalue().splitlines()


def gradviz_side(source: str, limits: Limits) -> tuple[float, list[str]]:
    options = RunOptions(seed=SEED, simulate_cuda=False, classic=False, limits=limits)
    started = CLOCK()
    trace = run_program(source, options)
    took = CLOCK() - started
    if trace.error is not None:
        raise SystemExit(f"gradviz refused the program: {trace.error}")
    return took, "\n".join(trace.stdout).splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", help="run the programs whose label holds this text")
    parser.add_argument("--cpu", action="store_true", help="time by CPU time, not wall time")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter
    torch.set_num_threads(1)
    clock = "CPU time" if args.cpu else "wall time"
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread, best of {args.repeat}, {clock}"
    )
    print(f"{'program':34} {'python s':>9} {'gradviz s':>10} {'ratio':>7}  same output")
    for label, source, limits in programs():
        if args.only and args.only not in label:
            continue
        py_runs = [python_side(source) for _ in range(args.repeat)]
        gv_runs = [gradviz_side(source, limits) for _ in range(args.repeat)]
        py, gv = min(t for t, _ in py_runs), min(t for t, _ in gv_runs)
        same = py_runs[0][1] == gv_runs[0][1]
        print(f"{label:34} {py:9.2f} {gv:10.2f} {gv / py:7.1f}x  {same}", flush=True)


if __name__ == "__main__":
    main()
