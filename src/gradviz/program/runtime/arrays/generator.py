"""`rng = np.random.default_rng(0)`: numpy's Generator for a program, as tutorials use it
(`rng.normal(size=(3, 4))`, `rng.integers(0, 10, size=5)`, `rng.choice`, `rng.shuffle`).

`default_rng(seed)` with a seed gives what CPython gives for the same seed; without one it
is seeded from the run's seed (a run is repeatable: the k-th unseeded generator of a run
draws from the run's seed and k, never from the clock). A program reaches the generator
only through the methods of `METHODS`, never its bit generator or state; every draw's
output (and, for a choice without replacement, the population numpy may permute) is sized
before it is drawn, as np.random's are (gradviz.program.runtime.arrays.random)."""

from __future__ import annotations

import numpy as np

from gradviz.program.runtime.arrays import sizes
from gradviz.program.runtime.arrays.values import ProgramArray
from gradviz.program.runtime.values import ProgramObject
from gradviz.program.syntax.program_error import did_you_mean

# Each method and the position of its `size` argument (None: sized from its input).
METHODS = {
    "random": 0,
    "standard_normal": 0,
    "normal": 2,
    "uniform": 2,
    "integers": 2,
    "choice": 1,
    "permutation": None,
    "shuffle": None,
}
PARAMETERS = ("normal", "uniform", "integers")  # arrays of parameters broadcast (no size)


def default_rng(arrays, args: tuple, kwargs: dict, node) -> NumpyGenerator:
    """np.random.default_rng(seed) or np.random.default_rng() (seeded from the run)."""
    label = "numpy.random.default_rng"
    seed = args[0] if len(args) == 1 and not kwargs else kwargs.get("seed")
    given = len(args) + len(kwargs)
    if given > 1 or (given == 1 and not args and "seed" not in kwargs):
        raise arrays.state.error("type", f"{label} takes one seed (an integer) here", node)
    if seed is None:
        arrays.unseeded_generators += 1
        seed = [arrays.state.seed % 2**63, arrays.unseeded_generators]
    elif isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
        raise arrays.state.error(
            "type",
            f"{label} takes an integer seed here (or none: the run's seed), not "
            f"{type(seed).__name__}",
            node,
        )
    return NumpyGenerator(arrays, arrays.run(label, np.random.default_rng, (seed,), {}, node))


class NumpyGenerator(ProgramObject):
    """A program's numpy Generator: the draws of METHODS, each sized first."""

    def __init__(self, arrays, generator: np.random.Generator):
        super().__init__(arrays.state)
        self.arrays = arrays
        self.generator = generator
        self.address: int | None = None  # RunState.made_up_address, when first shown

    def describe(self) -> str:
        return "numpy.random.Generator"

    def as_str(self) -> str:  # print(rng), str(rng), f"{rng}"
        return "Generator(PCG64)"

    def __repr__(self) -> str:  # repr(rng), [rng]: numpy's form, at an address of the run's
        if self.address is None:
            self.address = self.state.made_up_address()
        return f"Generator(PCG64) at 0x{self.address:X}"

    def method(self, name: str, args: tuple, kwargs: dict, node):
        arrays = self.arrays
        label = f"Generator.{name}"
        if name not in METHODS:
            raise arrays.state.error(
                "type",
                f"a numpy.random.Generator has no method `.{name}` in this language (it draws "
                f"with {', '.join(METHODS)})",
                node,
                did_you_mean(name, METHODS),
            )
        if name == "shuffle":
            return self.shuffle(args, kwargs, node, label)
        args, kwargs, _ = arrays.arguments(label, args, kwargs, node)
        arrays.sized(label, node, arrays.size_of(label, node, outputs, name, args, kwargs))
        result = arrays.run(label, getattr(self.generator, name), args, kwargs, node)
        return arrays.wrap(result, node, label)

    def shuffle(self, args: tuple, kwargs: dict, node, label: str) -> None:
        shuffle_in_place(self.arrays, self.generator.shuffle, args, kwargs, node, label)


def shuffle_in_place(arrays, shuffle, args: tuple, kwargs: dict, node, label: str) -> None:
    """`shuffle(x)` (a generator's or np.random's) of one array or list, in place, run by
    `arrays` (gradviz.program.runtime.arrays.module.Arrays)."""
    x = args[0] if args else kwargs.get("x")
    if len(args) + len(kwargs) != 1 or not isinstance(x, ProgramArray | list):
        raise arrays.state.error("type", f"{label} shuffles one array or list in place", node)
    target = x.array if isinstance(x, ProgramArray) else x
    arrays.run(label, shuffle, (target,), {}, node)


def outputs(name: str, args: tuple, kwargs: dict) -> list:
    """What a draw makes, from its arguments alone."""
    if name == "permutation":
        x = args[0] if args else kwargs.get("x")
        return [sizes.out(sizes.shape_of(x) or (sizes.whole(x),))]
    where = METHODS[name]
    size = args[where] if len(args) > where else kwargs.get("size")
    made = sizes.random_size(size)
    if size is None and name in PARAMETERS:
        made = sizes.broadcast(args, kwargs) or made
    if name == "choice":
        made = choice_outputs(args, kwargs, size)
    return made


def choice_outputs(args: tuple, kwargs: dict, size) -> list:
    """rng.choice(a, size, replace, ...): the draws (a row of an array's for each), and a
    permutation of the population where none is replaced (numpy may make one)."""
    a = args[0] if args else kwargs.get("a")
    replace = args[2] if len(args) > 2 else kwargs.get("replace", True)
    axis = args[4] if len(args) > 4 else kwargs.get("axis", 0)
    drawn = () if size is None else sizes.dims(size)
    shape = sizes.shape_of(a)
    if shape:
        axis = sizes.whole(axis) % len(shape)
        made = [sizes.out(shape[:axis] + drawn + shape[axis + 1 :])]
        population = shape[axis]
    else:
        made = [sizes.out(drawn)]
        population = sizes.whole(a)
    if not replace:
        made.append(sizes.out((population,)))
    return made
