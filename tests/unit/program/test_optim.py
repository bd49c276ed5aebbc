"""gradviz.program.objects.optimizers: optimizer steps and schedules give PyTorch's own numbers, each
step is recorded before and after, and an optimizer's state is counted before it exists."""

from __future__ import annotations

import pytest
import torch

from gradviz.program.results.limits import Limits
from tests.unit.program.test_nn import ok, reference, refused

STEP = "opt.zero_grad()\nloss = loss_fn(net(x), y)\nloss.backward()\nopt.step()\n"


def training(optimizer: str, steps: int = 3, extra: str = "") -> str:
    return (
        "torch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))\n"
        "x = torch.randn(16, 3)\n"
        "y = torch.randn(16, 1)\n"
        f"opt = {optimizer}\n"
        "loss_fn = nn.MSELoss()\n" + extra + STEP * steps
    )


def assert_trained_like_torch(source: str, atol: float = 1e-6) -> None:
    trace = ok(source)
    env = reference(source)
    for name, p in env["net"].named_parameters():
        got = torch.tensor(trace.tensor(f"net.{name}").value)
        assert torch.allclose(got, p.detach(), atol=atol, rtol=0), name
    assert abs(trace.tensor("loss").value - env["loss"].item()) <= atol


def test_sequential_mlp_trained_with_sgd_matches_torch():
    assert_trained_like_torch(training("optim.SGD(net.parameters(), lr=0.1)", steps=5))


@pytest.mark.parametrize(
    "optimizer",
    [
        "optim.SGD(net.parameters(), lr=0.05, momentum=0.9)",
        "optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)",
        "optim.Adam(net.parameters(), lr=0.01)",
        "optim.Adam(net.parameters(), lr=0.01, betas=(0.8, 0.99), amsgrad=True)",
        "optim.AdamW(net.parameters(), lr=0.01, weight_decay=0.1)",
    ],
)
def test_optimizer_steps_match_torch(optimizer):
    assert_trained_like_torch(training(optimizer, steps=4))


def test_dropout_while_training_draws_what_torch_draws():
    source = training("optim.SGD(net.parameters(), lr=0.1)", steps=3).replace(
        "nn.ReLU(),", "nn.ReLU(), nn.Dropout(0.3),"
    )
    assert_trained_like_torch(source)


@pytest.mark.parametrize(
    "scheduler",
    [
        "optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)",
        "optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)",
        "optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)",
    ],
)
def test_schedulers_change_the_rate_as_torch_does(scheduler):
    source = training(
        "optim.SGD(net.parameters(), lr=0.1)", steps=0, extra=f"sched = {scheduler}\n"
    )
    source += (STEP + "sched.step()\n") * 3 + "lr = sched.get_last_lr()\nprint(lr)\n"
    trace = ok(source)
    env = reference(source)
    assert trace.stdout == [str(env["lr"])]
    assert_trained_like_torch(source)


def test_a_step_is_recorded_before_and_after():
    trace = ok(training("optim.SGD(net.parameters(), lr=0.1)", steps=2))
    assert [u.name for u in trace.updates] == [
        "net.0.weight",
        "net.0.bias",
        "net.2.weight",
        "net.2.bias",
    ] * 2
    first = trace.updates[0]
    assert first.line == 10 and first.optimizer == "opt (SGD)"
    assert first.before != first.after
    assert trace.updates[4].before == first.after  # the second step starts where one ended


def test_raw_tensors_can_be_optimised():
    trace = ok(
        "w = torch.tensor([1.0, -2.0], requires_grad=True)\n"
        "opt = optim.SGD([w], lr=0.5)\n"
        "loss = (w * w).sum()\n"
        "loss.backward()\n"
        "opt.step()\n"
    )
    assert trace.tensor("w").value == [0.0, 0.0]
    assert trace.updates[0].name == "w"


def test_gradients_accumulate_without_zero_grad_and_the_trace_says_so():
    trace = ok(
        "net = nn.Linear(2, 1)\n"
        "x = torch.ones(1, 2)\n"
        "net(x).sum().backward()\n"
        "net(x).sum().backward()\n"
        "net.zero_grad()\n"
        "net(x).sum().backward()\n"
    )
    assert trace.tensor("net.weight").grad == [[1.0, 1.0]]
    assert [b.accumulated for b in trace.backward] == [[], ["net.weight", "net.bias"], []]
    twice = ok("net = nn.Linear(2, 1)\nx = torch.ones(1, 2)\n" + "net(x).sum().backward()\n" * 2)
    assert twice.tensor("net.weight").grad == [[2.0, 2.0]]


def test_optimizer_state_counts_against_the_bytes_in_all():
    big = "".join(f"p{i} = torch.zeros(20_000_000, requires_grad=True)\n" for i in range(3))
    ok(big + "opt = optim.SGD([p0, p1, p2], lr=0.1)\n")  # plain SGD keeps no state
    err = refused(big + "opt = optim.Adam([p0, p1, p2])\n", "limit", "480 MB of state")
    assert (err.line, err.col) == (4, 7)
    assert "budget of 400 MB in all" in err.message
    err = refused(
        big + "opt = optim.SGD([p0, p1, p2], lr=0.1, momentum=0.9)\n",
        "limit",
        "240 MB of state",
        limits=Limits(max_total_bytes=400_000_000),
    )


@pytest.mark.parametrize(
    ("source", "kind", "words"),
    [
        ("net = nn.Linear(2, 2)\nopt = optim.SGD(net, lr=0.1)", "type", "parameters"),
        ("opt = optim.SGD(lr=0.1)", "type", "needs the parameters"),
        ("opt = optim.SGD([1, 2], lr=0.1)", "type", "optimises tensors"),
        (
            "net = nn.Linear(2, 2)\nopt = optim.SGD(net.parameters(), lr=0.1, foreach=True)",
            "type",
            "no argument `foreach`",
        ),
        (
            "net = nn.Linear(2, 2)\nopt = optim.Adam(net.parameters(), differentiable=True)",
            "type",
            "no argument `differentiable`",
        ),
        (
            "net = nn.Linear(2, 2)\nopt = optim.SGD(net.parameters(), lr=0.1)\nopt.step(print)",
            "type",
            "no closure",
        ),
        (
            "net = nn.Linear(2, 2)\nopt = optim.SGD(net.parameters(), lr=0.1)\ng = opt.param_groups",
            "type",
            "no attribute",
        ),
        ("s = optim.lr_scheduler.StepLR(3, step_size=1)", "type", "optimizer first"),
        (
            "x = torch.ones(2, requires_grad=True)\ny = x * 2\nopt = optim.SGD([y], lr=0.1)",
            "runtime",
            "non-leaf",
        ),
    ],
)
def test_optimizer_refusals(source, kind, words):
    refused(source, kind, words)
