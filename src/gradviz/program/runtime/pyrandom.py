"""The `random` module a program may import: Python's own generator, one per run, seeded
from the run's seed (so a run is repeatable, as every gradviz run is) and re-seeded by
`random.seed(n)`, which then gives what CPython gives after the same call. The generator
itself never reaches a program: only these functions do, each sized first where it makes
a list."""

from __future__ import annotations

import random

from gradviz.program.allowlists.tables import FnSpec
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.errors import call_error
from gradviz.program.runtime.values import Namespace, checked
from gradviz.program.syntax.program_error import ProgramError


class ProgramRandom:
    """One run's `random` module."""

    def __init__(self, seed: int, max_items: int):
        self.rng = random.Random(seed)
        self.max_items = max_items
        self._namespace: Namespace | None = None

    def seed(self, a=None) -> None:
        if a is None or isinstance(a, bool) or not isinstance(a, int | float | str):
            raise TypeError("random.seed takes an int, a float or a str here")
        self.rng.seed(a)

    def sample(self, population, k):
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError("random.sample's k must be an int")
        if k > self.max_items:
            raise ValueError(
                f"random.sample would make a list of {k:,} items; the limit is "
                f"{self.max_items:,} items per list"
            )
        return self.rng.sample(population, k)

    def shuffle(self, items) -> None:
        if not isinstance(items, list):
            raise TypeError(
                f"random.shuffle shuffles a list in place, not a {type(items).__name__}"
            )
        self.rng.shuffle(items)

    def choice(self, seq):
        if not isinstance(seq, list | tuple | str | range):
            raise TypeError(
                f"random.choice picks from a list, tuple, str or range, not a {type(seq).__name__}"
            )
        return self.rng.choice(seq)

    def namespace(self) -> Namespace:
        """The module a program imports, made on its first import (each import binds it)."""
        if self._namespace is None:
            self._namespace = self._make_namespace()
        return self._namespace

    def _make_namespace(self) -> Namespace:
        rng = self.rng
        plain = {
            "random": rng.random,
            "randint": rng.randint,
            "randrange": rng.randrange,
            "uniform": rng.uniform,
            "gauss": rng.gauss,
            "normalvariate": rng.normalvariate,
        }
        own = {
            "seed": self.seed,
            "sample": self.sample,
            "shuffle": self.shuffle,
            "choice": self.choice,
        }
        return Namespace(
            "random",
            {name: FnSpec(fn, check="bounded") for name, fn in {**plain, **own}.items()},
        )


def call_plain(state: RunState, budget, library, path: str, member: FnSpec, args, kwargs, node):
    """A function of Python's `random` on plain values (no tensor among them): what the
    library's call (`library`, gradviz.program.runtime.torch_calls) comes to for them, without
    its checks for tensors: one operation counted on `budget`, no layer or optimizer among a
    list's items, Python's errors as the program's, a plain result."""
    state.node = node
    library.refuse_objects(path, args, kwargs, node)
    budget.ops += 1
    try:
        result = member.target(*args, **kwargs)
    except ProgramError:
        raise
    except Exception as exc:
        raise call_error(state, exc, node, path) from None
    return checked(state, result, node, path)
