"""Quiet passes (gradviz.program.recording.quiet_passes): a long loop's middle passes skip the recording no
result shows. A run with them must give what a run recording every pass gives (node and
layer-call ids aside: those count what was recorded), and where its prediction fails (a
later pass makes no backward call, a quiet pass's tensor is kept, an error) the run is made
again recording every pass."""

import re

import pytest

from gradviz.graph.dot import to_dot
from gradviz.program.interpreter import statements as interpreter
from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS
from gradviz.program.recording import quiet_passes as quiet
from gradviz.program.results.trace import RunOptions

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
HEADER += "import torch.optim as optim\n"

LOOP = HEADER + (
    "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
    "opt = optim.SGD(net.parameters(), lr=0.01)\n"
    "x = torch.randn(5, 3)\n"
    "y = torch.randn(5, 1)\n"
    "for step in range(40):\n"
    "    opt.zero_grad()\n"
    "    loss = F.mse_loss(net(x), y)\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "print(loss.item())\n"
)


def _ids(text: str) -> str:
    """Node ids (f12) and layer-call ids (m3) numbered in order of appearance."""
    seen: dict[str, str] = {}

    def number(m):
        kind = m.group(1)
        return seen.setdefault(m.group(0), f"{kind}#{sum(k[0] == kind for k in seen)}")

    return re.sub(r"(?<![A-Za-z0-9])([fm])(\d+)\b", number, text)


def _shown(trace) -> dict:
    """What a run's result shows, as text."""
    return {
        "error": _ids(repr(trace.error)),
        "graph": _ids(to_dot(trace.graph)),
        "stdout": trace.stdout,
        "backward": _ids(repr(trace.backward)),
        "calls": _ids(
            repr(
                (
                    trace.calls.count,
                    trace.calls.steps,
                    [(c.number, to_dot(c.graph), c.grads, c.steps) for c in trace.calls.kept],
                )
            )
        ),
        "updates": trace.updates,
        "tensors": [(t.name, t.preview, t.grad_preview) for t in trace.tensors],
    }


class _Runs(list):
    """The runs run_program made, each as [quiet passes allowed, quiet stretches made]."""

    def __getitem__(self, i):
        made = super().__getitem__(i)
        return [made.enabled, len(made.ranges)]


@pytest.fixture
def runs(monkeypatch):
    made = _Runs()
    init = quiet.QuietPasses.__init__

    def noting(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(quiet.QuietPasses, "__init__", noting)
    return made


def _both(source: str, **options):
    quiet_run = run_program(source, RunOptions(classic=False, **options))
    full_run = run_program(source, RunOptions(classic=False, quiet_passes=False, **options))
    return quiet_run, full_run


def test_a_long_training_loop_runs_quiet_and_shows_what_a_full_run_shows(runs):
    quiet_run, full_run = _both(LOOP)
    assert runs[0] == [True, 1]  # one quiet stretch, and no second run
    assert len(runs) == 2 and runs[1] == [False, 0]
    assert quiet_run.error is None
    assert [c.number for c in quiet_run.calls.kept] == [1, 2, 3, 38, 39, 40]
    assert _shown(quiet_run) == _shown(full_run)


def test_the_middle_passes_are_quiet_and_the_first_and_last_are_not(monkeypatch):
    seen: list[bool] = []
    backward = interpreter.Library.backward

    def noting(self, *args, **kwargs):
        seen.append(self.state.quiet)
        return backward(self, *args, **kwargs)

    monkeypatch.setattr(interpreter.Library, "backward", noting)
    run_program(LOOP, RunOptions(classic=False))
    # passes 0-9 name their tensors; the last three make the last window's calls
    assert seen == [False] * 10 + [True] * 27 + [False] * 3


def test_accumulating_gradients_are_noted_in_quiet_passes_too(runs):
    quiet_run, full_run = _both(LOOP.replace("opt.zero_grad()", "pass"))
    assert runs[0][1] == 1
    assert all(b.accumulated for b in quiet_run.backward[1:])
    assert _shown(quiet_run) == _shown(full_run)


@pytest.mark.parametrize(
    "change",
    [
        # the last passes make no backward call: the last window's calls were quiet
        ("    loss.backward()\n", "    if step < 30:\n        loss.backward()\n"),
        # a quiet pass's tensor is kept in a variable the loop does not bind again
        ("    opt.step()\n", "    opt.step()\n    if step == 20:\n        kept = loss * 2\n"),
    ],
    ids=["backward-stops", "tensor-kept"],
)
def test_a_failed_prediction_runs_the_program_again_recording_every_pass(runs, change):
    source = LOOP.replace(*change)
    quiet_run, full_run = _both(source)
    assert runs[0] == [True, 1] and runs[1] == [False, 0]  # the second run records all
    assert _shown(quiet_run) == _shown(full_run)


def test_a_quiet_pass_s_nodes_in_a_later_graph_run_the_program_again(runs):
    source = HEADER + (
        "w = torch.ones(2, requires_grad=True)\n"
        "h = torch.ones(2)\n"
        "for step in range(30):\n"
        "    h = torch.tanh(w * h)\n"
        "    h.sum().backward(retain_graph=True)\n"
    )
    quiet_run, full_run = _both(source)
    assert runs[0] == [True, 1] and runs[1] == [False, 0]
    assert _shown(quiet_run) == _shown(full_run)


def test_an_error_in_a_quiet_pass_is_the_same_error_with_the_same_calls(runs):
    source = LOOP.replace("    opt.step()\n", "    opt.step()\n    if step == 25:\n        nope\n")
    quiet_run, full_run = _both(source)
    assert quiet_run.error is not None and "nope" in quiet_run.error.message
    assert quiet_run.error.line == full_run.error.line == 15
    assert runs[0] == [True, 1] and runs[1] == [False, 0]
    assert [c.number for c in quiet_run.calls.kept] == [1, 2, 3, 24, 25, 26]
    assert _shown(quiet_run) == _shown(full_run)


@pytest.mark.parametrize(
    "source",
    [
        LOOP.replace("    opt.step()\n", "    opt.step()\n    if step == 100:\n        break\n"),
        LOOP.replace("for step in range(40):", "step = 0\nwhile step < 40:\n    step += 1"),
        LOOP.replace("for step in range(40):", "for step in range(13):"),
    ],
    ids=["break", "while", "short"],
)
def test_loops_that_may_end_early_or_are_short_record_every_pass(runs, source):
    quiet_run, full_run = _both(source)
    assert runs[0] == [True, 0] and len(runs) == 2
    assert _shown(quiet_run) == _shown(full_run)


def test_nested_loops_a_function_and_a_class_give_what_a_full_run_gives(runs):
    source = HEADER + (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(3, 1)\n"
        "    def forward(self, x):\n"
        "        return torch.sigmoid(self.fc(x))\n"
        "net = Net()\n"
        "opt = optim.Adam(net.parameters(), lr=0.1)\n"
        "x = torch.randn(4, 3)\n"
        "def train_step(x):\n"
        "    opt.zero_grad()\n"
        "    loss = net(x).sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    return loss\n"
        "losses = []\n"
        "for epoch in range(3):\n"
        "    for i in range(12):\n"
        "        losses.append(train_step(x).item())\n"
        "print(len(losses), round(losses[-1], 4))\n"
    )
    quiet_run, full_run = _both(source)
    assert runs[0][0] and runs[0][1] >= 1 and len(runs) == 2  # quiet, right the first time
    assert quiet_run.stdout == full_run.stdout and quiet_run.error is None
    assert _shown(quiet_run) == _shown(full_run)


def test_a_run_asked_for_a_backward_after_the_program_keeps_it_last(runs):
    source = LOOP + "final = net(x).sum()\n"
    quiet_run, full_run = _both(source, backward="final")
    assert runs[0] == [True, 1] and len(runs) == 2
    assert quiet_run.calls.kept[-1].number == 41
    assert _shown(quiet_run) == _shown(full_run)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset_gives_what_a_full_run_gives(preset):
    options = {"backward": preset.backward} if preset.backward else {}
    quiet_run, full_run = _both(preset.source, **options)
    assert _shown(quiet_run) == _shown(full_run)


def test_an_error_in_the_first_quiet_pass_inside_a_forward_names_both_lines(runs):
    source = HEADER + (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(3, 1)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "net = Net()\n"
        "for step in range(40):\n"
        "    x = torch.randn(4, 3) if step != 10 else torch.randn(4, 5)\n"
        "    net(x).sum().backward()\n"
    )
    quiet_run, full_run = _both(source)
    assert runs[0] == [True, 1] and runs[1] == [False, 0]
    assert quiet_run.error.line == 10 and "called at line 14" in quiet_run.error.hint
    assert _shown(quiet_run) == _shown(full_run)


def test_the_second_run_keeps_to_the_first_one_s_wall_clock_limit(monkeypatch):
    made = []
    init = interpreter.Interpreter.__init__

    def noting(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(interpreter.Interpreter, "__init__", noting)
    run_program(
        LOOP.replace("    loss.backward()\n", "    if step < 30:\n        loss.backward()\n")
    )
    assert len(made) == 2 and made[1].quotas.deadline == made[0].quotas.deadline


def test_a_hand_written_update_loop_runs_quiet_once(runs):
    """`for p in parameters: p.data += ...` after backward binds each leaf in every pass;
    a leaf has no sources to read, so its quiet binding is the one a full run makes, and
    the program is not run a second time (makemore's loop)."""
    source = HEADER + (
        "W = torch.randn(3, 2, requires_grad=True)\n"
        "b = torch.randn(2, requires_grad=True)\n"
        "parameters = [W, b]\n"
        "x = torch.randn(5, 3)\n"
        "for step in range(40):\n"
        "    loss = (x @ W + b).pow(2).mean()\n"
        "    for p in parameters:\n"
        "        p.grad = None\n"
        "    loss.backward()\n"
        "    for p in parameters:\n"
        "        p.data += -0.1 * p.grad\n"
        "print(loss.item())\n"
    )
    quiet_run, full_run = _both(source)
    assert runs[0] == [True, 1] and len(runs) == 2  # quiet, right the first time
    assert _shown(quiet_run) == _shown(full_run)


GENERATOR_EPOCHS = HEADER + (
    "w = torch.zeros(3, 1, requires_grad=True)\n"
    "x = torch.randn(60, 3)\n"
    "y = torch.randn(60, 1)\n"
    "def batches(sizes):\n"
    "    for i in range(0, sizes[epoch], 3):\n"
    "        yield x[i:i + 3], y[i:i + 3]\n"
    "for epoch in range(3):\n"
    "    for xb, yb in batches(SIZES):\n"
    "        loss = ((xb @ w - yb) ** 2).mean()\n"
    "        loss.backward()\n"
    "        with torch.no_grad():\n"
    "            w -= 0.1 * w.grad\n"
    "            w.grad.zero_()\n"
    "    print(epoch, round(loss.item(), 4))\n"
)


def test_a_loop_over_a_generator_runs_quiet_in_its_later_runs(runs):
    """d2l's `for X, y in data_iter(...)` in each epoch: its length is not known first, so
    its first run records every pass; the later runs are predicted to make as many passes."""
    source = GENERATOR_EPOCHS.replace("SIZES", "[60, 60, 60]")
    quiet_run, full_run = _both(source)
    assert runs[0] == [True, 2]  # the second and third epochs, and no second run
    assert len(runs) == 2
    assert quiet_run.error is None
    assert _shown(quiet_run) == _shown(full_run)


def test_a_generator_loop_that_ends_sooner_than_predicted_is_run_again(runs):
    """The last epoch's generator yields fewer batches than the one before: its last passes
    ran quiet though they were the run's last, and the run is made again recording all."""
    source = GENERATOR_EPOCHS.replace("SIZES", "[60, 60, 30]")
    quiet_run, full_run = _both(source)
    assert [runs[0][0], runs[1][0]] == [True, False]  # quiet, then again without
    assert len(runs) == 3
    assert _shown(quiet_run) == _shown(full_run)


def test_a_while_loop_is_predicted_from_its_run_before(runs):
    source = HEADER + (
        "w = torch.zeros(2, requires_grad=True)\n"
        "def train(steps):\n"
        "    n = 0\n"
        "    while n < steps:\n"
        "        loss = ((w - 1) ** 2).sum()\n"
        "        loss.backward()\n"
        "        n += 1\n"
        "for k in range(3):\n"
        "    train(30)\n"
        "print(w.grad)\n"
    )
    quiet_run, full_run = _both(source)
    assert runs[0] == [True, 2] and len(runs) == 2
    assert _shown(quiet_run) == _shown(full_run)
