"""Check the gradients a run shows against finite differences, in float64.

The program is re-run as a function of its leaf tensors (each leaf that requires
grad is replaced, where the program names it, by a float64 copy), so
torch.autograd.gradcheck can compare autograd's analytical Jacobian with a
numerical one, and the gradients shown on the graph (from the program as written,
usually float32) are compared with central differences.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from gradviz.program.interpreter.statements import RESERVED_NAMES, Interpreter
from gradviz.program.results.trace import GradCheckResult, LeafCheck, RunOptions
from gradviz.program.syntax.checker import parse
from gradviz.program.syntax.program_error import ProgramError

MAX_CHECK_ELEMENTS = 200


def _leaves(source: str, options: RunOptions) -> tuple[Interpreter, list]:
    tree = parse(source, options.limits, RESERVED_NAMES)
    interp = Interpreter(source, tree, options, skip_backward=True)
    interp.run()
    seen, leaves = set(), []
    for b in interp.state.bindings:
        if b.tensor.is_leaf and b.tensor.requires_grad and id(b.tensor) not in seen:
            seen.add(id(b.tensor))
            leaves.append(b)
    return interp, leaves


def _refusal(leaves: list) -> str | None:
    """Why these leaves cannot be checked, or None when they can."""
    if not leaves:
        return "No tensor in this program requires grad, so there is nothing to check."
    total = sum(b.tensor.numel() for b in leaves)
    if total > MAX_CHECK_ELEMENTS:
        return (
            f"The leaves hold {total:,} values; finite differences are run for at most "
            f"{MAX_CHECK_ELEMENTS} (two program runs per value). Use smaller tensors to check."
        )
    if any(not b.tensor.dtype.is_floating_point for b in leaves):
        return "Only floating-point leaves can be checked."
    places = [(b.name, b.line) for b in leaves]
    if len(set(places)) != len(places):
        return (
            "A leaf is made more than once on the same line (in a loop, or in a function "
            "called more than once): the check replaces each leaf where the program names "
            "it, so it cannot tell them apart. Make the leaves before the loop."
        )
    return None


def _program_as_function(
    source: str, options: RunOptions, leaves: list, target: str, ones: bool
) -> Callable[..., torch.Tensor]:
    """The program as a function of its leaves: `target` (summed when `ones`), in float64."""
    keys = [(b.name, b.line) for b in leaves]

    def f(*values):
        interp = Interpreter(
            source,
            parse(source, options.limits, RESERVED_NAMES),
            options,
            dict(zip(keys, values, strict=True)),
            skip_backward=True,
        )
        interp.run()
        out = interp.state.env.get(target)
        if not isinstance(out, torch.Tensor):
            raise ProgramError("name", f"there is no tensor named `{target}`")
        if out.numel() != 1 and ones:
            out = out.sum()
        return out.to(torch.float64)

    return f


def _leaf_check(b, numerical: torch.Tensor, shown_value) -> LeafCheck:
    """One leaf's shown gradient against its central differences."""
    if shown_value is None:
        diff, ok = None, False
    else:
        shown_t = torch.tensor(shown_value, dtype=torch.float64)
        diff = (
            float((shown_t - numerical).abs().max()) if shown_t.shape == numerical.shape else None
        )
        ok = diff is not None and bool(torch.allclose(shown_t, numerical, rtol=1e-3, atol=1e-4))
    return LeafCheck(b.name, b.line, shown_value, numerical.tolist(), diff, ok)


def _central_differences(f, inputs: list, leaves: list, shown: dict) -> list[LeafCheck]:
    """Central differences for every leaf value, compared with what the graph shows."""
    checks = []
    eps = 1e-6
    with torch.no_grad():
        base = [v.detach().clone() for v in inputs]
    for i, b in enumerate(leaves):
        numerical = torch.zeros_like(base[i])
        flat = numerical.view(-1)
        for j in range(base[i].numel()):
            plus = [v.clone() for v in base]
            minus = [v.clone() for v in base]
            plus[i].view(-1)[j] += eps
            minus[i].view(-1)[j] -= eps
            with torch.no_grad():
                flat[j] = (f(*plus).sum() - f(*minus).sum()) / (2 * eps)
        checks.append(_leaf_check(b, numerical, shown.get(b.name)))
    return checks


def _verdict(passed: bool, checks: list[LeafCheck], untracked: list[str]) -> str:
    if passed and all(c.ok for c in checks):
        return "Pass: autograd's gradients match finite differences (float64 gradcheck, and the shown gradients within 1e-3)."
    if not passed and untracked:
        return (
            "Differs, as expected here: finite differences see every path from the leaves to the "
            f"output, but autograd ignores the paths through {', '.join(untracked)} (detached or "
            "made under torch.no_grad()), so its gradient is, by design, not the full derivative."
        )
    if not passed:
        return "Fail: torch.autograd.gradcheck found autograd and finite differences disagree (in float64)."
    missing = [c.name for c in checks if c.shown is None]
    if missing:
        return "Run backward first: no gradient is shown yet for " + ", ".join(missing)
    return "Fail: the shown gradients differ from finite differences by more than 1e-3."


def check_gradients(
    source: str,
    target: str,
    shown: dict[str, list | float | None],
    options: RunOptions | None = None,
    ones: bool = False,
) -> GradCheckResult:
    """Compare `shown` ({leaf name: gradient}) with float64 finite differences for `target`."""
    options = options or RunOptions()
    options = RunOptions(
        seed=options.seed,
        limits=options.limits,
        classic=False,
        simulate_cuda=options.simulate_cuda,  # the devices the run that showed them had
    )
    try:
        interp, leaves = _leaves(source, options)
    except ProgramError as exc:
        return GradCheckResult(
            False, f"The program must run without errors first (line {exc.line}: {exc.message})."
        )
    refusal = _refusal(leaves)
    if refusal:
        return GradCheckResult(False, refusal)
    inputs = [b.tensor.detach().to(torch.float64).requires_grad_(True) for b in leaves]
    f = _program_as_function(source, options, leaves, target, ones)
    try:
        passed = torch.autograd.gradcheck(
            f, tuple(inputs), eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=False
        )
    except ProgramError as exc:
        return GradCheckResult(False, f"Could not re-run the program for the check: {exc.message}")
    except RuntimeError as exc:
        return GradCheckResult(False, f"gradcheck could not run: {str(exc).splitlines()[0]}")
    checks = _central_differences(f, inputs, leaves, shown)
    untracked = [
        b.name for b in interp.state.bindings if b.no_grad or b.op in ("detach", "detach_")
    ]
    all_ok = bool(passed) and all(c.ok for c in checks)
    return GradCheckResult(all_ok, _verdict(bool(passed), checks, untracked), bool(passed), checks)
