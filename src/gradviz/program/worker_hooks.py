"""The worker side of the warm pool and the job workers: the hooks every worker calls
(prepare, self_test, state) and the pool's jobs (run_job, check_job). Light: torch and the
interpreter, no warm-up run. The app's forkserver imports gradviz.program.preload (this, then a
warm-up program; gradviz.workers.table.PRELOAD); the command line's one-shot worker imports
only this (table.CLI_PRELOAD), and a program pays for the parts of torch it uses.

Importing it settles, before any limit applies, what torch would otherwise look up lazily
under the worker's limits and get wrong: the temporary directory (tempfile probes for one by
writing a file, which RLIMIT_FSIZE=0 refuses; with none, torch's lazily imported parts fail
and a size check that fails lets the operation run unmeasured). The directory is only
named: a worker still cannot write a file there.
"""

from __future__ import annotations

import contextlib
import tempfile

import torch

from gradviz.program.gradcheck import check_gradients
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions, cap_result

# One thread here, before any torch op: a forkserver that has started OpenMP's thread pool
# forks children whose first parallel region hangs (the pool's threads do not survive a
# fork). Workers choose their own thread count after the fork (prepare).
torch.set_num_threads(1)

# Named once here, before the limits (see above); later calls return it without a probe.
tempfile.gettempdir()

# Must be refused by the FLOP cap; checked by every warm worker under its limits.
CANARY = "a = torch.ones(4000, 4000)\nb = a @ a\n"
# Must be refused by the size cap, from its numbers alone (no meta call, so none of torch's
# lazy imports): the one-shot worker's quick check.
SIZE_CANARY = "a = torch.ones(40000, 40000)\n"


def prepare(threads: int) -> None:
    """Torch's thread counts for this worker (before its limits are set)."""
    torch.set_num_threads(threads)
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)


def self_test() -> str | None:
    """None when the size checks hold under this worker's limits, else why not."""
    canary = run_job(CANARY, RunOptions(classic=False)).error
    if canary is not None and "floating-point operations" in canary.message:
        return None
    return f"the size checks failed their self-test: {canary}"


def quick_self_test() -> str | None:
    """self_test for a worker that runs one program (the command line's): the size checks
    are on, and torch's lazily imported parts will load under the limits (the temp dir is
    named), without the canary's FLOP count, whose first use imports sympy (about 0.3 s,
    most of such a run's cost). Should a lazy import fail all the same, the size check
    that needed it stops the program (Budget._meta_call) instead of letting it run."""
    if tempfile.tempdir is None:
        return "the size checks failed their self-test: no temporary directory was named"
    canary = run_job(SIZE_CANARY, RunOptions(classic=False)).error
    if canary is not None and "would allocate" in canary.message:
        return None
    return f"the size checks failed their self-test: {canary}"


def state() -> tuple:
    """Process-wide torch state a program must not be able to change."""
    return (
        str(torch.get_default_dtype()),
        str(torch.get_default_device()),
        torch.get_num_threads(),
        torch.is_grad_enabled(),
        torch.are_deterministic_algorithms_enabled(),
        bytes(torch.get_rng_state().numpy().tobytes()),
    )


def run_job(source, options):
    """run_program, with what goes back to the server bounded here, in the worker (tensors
    with values, values in all, bytes pickled) and a note in trace.summary of what was left out."""
    return cap_result(run_program(source, options))


def check_job(source, target, shown, options, ones):
    return check_gradients(source, target, shown, options, ones=ones)
