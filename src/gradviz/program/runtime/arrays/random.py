"""`np.random` for one run: numpy's legacy generator (what `np.random.seed(0)` then
`np.random.rand(3)` uses in CPython), one per run, seeded from the run's seed (so a run is
repeatable) and re-seeded by `np.random.seed(n)`, after which it gives what CPython gives.
Every call's output is sized before it is drawn."""

from __future__ import annotations

import numpy as np

from gradviz.program.runtime.arrays import sizes
from gradviz.program.runtime.arrays.generator import default_rng, shuffle_in_place


class NumpyRandom:
    """The functions of tables.RANDOM, on the run's own numpy.random.RandomState."""

    def __init__(self, arrays):
        self.arrays = arrays
        self.rng = np.random.RandomState(arrays.state.seed % 2**32)

    def call(self, name: str, args: tuple, kwargs: dict, node):
        arrays = self.arrays
        label = f"numpy.random.{name}"
        if name == "shuffle":
            return self.shuffle(args, kwargs, node, label)
        args, kwargs, _ = arrays.arguments(label, args, kwargs, node)
        if name == "default_rng":  # a Generator of the program's own
            return default_rng(arrays, args, kwargs, node)
        if name == "seed":
            seed = args[0] if len(args) == 1 and not kwargs else kwargs.get("seed")
            if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
                raise arrays.state.error(
                    "type",
                    f"{label} takes one integer here: a run is repeatable, so it is never "
                    "seeded from the clock",
                    node,
                )
            return arrays.run(label, self.rng.seed, (seed,), {}, node)
        arrays.sized(label, node, arrays.size_of(label, node, self.outputs, name, args, kwargs))
        result = arrays.run(label, getattr(self.rng, name), args, kwargs, node)
        return arrays.wrap(result, node, label)

    @staticmethod
    def outputs(name: str, args: tuple, kwargs: dict) -> list:
        if name in ("rand", "randn"):
            return [sizes.out(tuple(sizes.whole(a) for a in args))]
        if name == "permutation":
            x = args[0] if args else kwargs.get("x")
            return [sizes.out(sizes.shape_of(x) or (sizes.whole(x),))]
        where = {"randint": 2, "random": 0, "normal": 2, "uniform": 2, "choice": 1}[name]
        size = args[where] if len(args) > where else kwargs.get("size")
        made = sizes.random_size(size)
        if size is None and name in ("normal", "uniform"):  # arrays of parameters broadcast
            made = sizes.broadcast(args, kwargs) or made
        if name == "choice":
            a = args[0] if args else kwargs.get("a")
            replace = args[2] if len(args) > 2 else kwargs.get("replace", True)
            if not isinstance(a, np.ndarray | list | tuple) and not replace:
                made = made + [sizes.out((sizes.whole(a),))]  # a permutation of range(a)
        return made

    def shuffle(self, args: tuple, kwargs: dict, node, label: str) -> None:
        shuffle_in_place(self.arrays, self.rng.shuffle, args, kwargs, node, label)
