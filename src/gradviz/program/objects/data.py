"""In-memory data a program makes: `torch.utils.data.TensorDataset` over its tensors and
`DataLoader` over that (gradviz.program.allowlists.nntables.DATA).

A DataLoader here reads in the program's own process (num_workers=N is taken, with a
warning, and read in one process; collate_fn, samplers and worker functions are refused) with PyTorch's own sampling, drawing from the run's generator, so
`torch.manual_seed(0)` shuffles as it does in PyTorch. Each batch is counted against the
byte caps before it is stacked. `iter(loader)` and `next(...)` (and a `for` loop) go through
Python's iterator protocol on the objects here (gradviz.program.runtime.values.ProgramObject).
"""

from __future__ import annotations

import math
import operator

import torch
import torch.utils.data as torchdata

from gradviz.program.allowlists import nntables
from gradviz.program.objects.arguments import check_plain, given_arguments
from gradviz.program.objects.program_data import ProgramLoader
from gradviz.program.results.reports import RunWarning
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import ProgramObject, type_name

# A shuffled pass draws a permutation of the rows and keeps it as a Python list (PyTorch's
# RandomSampler): at most this many rows.
MAX_SHUFFLED = 1_000_000


class Data:
    """The datasets and loaders of one run."""

    def __init__(self, library: Library):
        self.library = library
        self.state = library.state

    def make(self, label: str, spec: nntables.ObjectSpec, args, kwargs, node) -> ProgramObject:
        state = self.state
        if spec.kind == "dataset":
            if kwargs or not args:
                raise state.error("type", f"{label} takes tensors: {label}(x, y)", node)
            for a in args:
                if not isinstance(a, torch.Tensor) or a.dim() == 0:
                    raise state.error(
                        "type",
                        f"{label} takes tensors with a first dimension, not a {type_name(a)}",
                        node,
                    )
            if len({a.shape[0] for a in args}) > 1:
                raise state.error(
                    "runtime", f"{label}: the tensors differ in their first dimension", node
                )
            return DatasetRef(self, torchdata.TensorDataset(*args))
        given = given_arguments(state, label, spec, args, kwargs, node)
        workers = self.workers(label, given.pop("num_workers", 0), node)
        dataset = given.pop("dataset", None)
        if isinstance(dataset, ProgramObject) and dataset.map_style:  # the program's own class
            check_plain(state, label, given, (), node)
            return ProgramLoader(self.library, dataset, given, node)
        if not isinstance(dataset, DatasetRef):
            raise state.error(
                "type",
                f"{label} reads a TensorDataset or a dataset class of the program's own (with "
                f"__len__ and __getitem__): {label}(TensorDataset(x, y), ...)",
                node,
            )
        check_plain(state, label, given, (), node)
        size = given.get("batch_size", 1)
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise state.error("type", f"{label}: batch_size must be a positive integer", node)
        try:
            made = torchdata.DataLoader(dataset.dataset, num_workers=0, **given)
        except Exception as exc:
            raise state.error("runtime", f"{label}: {exc}", node) from None
        return LoaderRef(self, made, dataset, workers)

    def workers(self, label: str, workers, node) -> int:
        """num_workers=N is taken, as in PyTorch, and read in one process all the same: the
        batches are the same as a worker process would make (PyTorch's sampling and
        stacking), only not in parallel. A warning at its line says so."""
        state = self.state
        if isinstance(workers, bool) or not isinstance(workers, int):
            raise state.error("type", f"{label}: num_workers must be an integer", node)
        if workers < 0:
            raise state.error(
                "runtime",
                f"{label}: num_workers option should be non-negative; use num_workers=0 to "
                "disable multiprocessing.",
                node,
            )
        if workers > 0:
            state.warnings.append(
                RunWarning(
                    line=getattr(node, "lineno", 0),
                    message=f"num_workers={workers} runs in one process here: the batches are "
                    "the same, read one after another",
                    category="UserWarning",
                )
            )
        return workers


class DatasetRef(ProgramObject):
    """A TensorDataset: `len(ds)`, `ds[i]` (a tuple, one row of each tensor), `ds.tensors`."""

    def __init__(self, data: Data, dataset: torchdata.TensorDataset):
        super().__init__(data.state)
        self.data = data
        self.dataset = dataset

    def describe(self) -> str:
        return "TensorDataset"

    def length(self, node) -> int:
        return len(self.dataset)

    def passes(self) -> int | None:
        return len(self.dataset)

    def index(self, key, node):
        call = self.data.library.call
        return tuple(
            call("indexing", operator.getitem, (t, key), {}, node, "meta")
            for t in self.dataset.tensors
        )

    def attribute(self, name: str, node):
        if name == "tensors":
            return tuple(self.dataset.tensors)
        return super().attribute(name, node)

    def iterate(self, node) -> ProgramObject:
        return Rows(self)


class Rows(ProgramObject):
    """Python's iterator over a dataset's rows."""

    def __init__(self, dataset: DatasetRef):
        super().__init__(dataset.state)
        self.dataset = dataset
        self.at = 0

    def describe(self) -> str:
        return "TensorDataset iterator"

    def iterate(self, node) -> ProgramObject:
        return self

    def next_value(self, node):
        if self.at >= len(self.dataset.dataset):
            raise StopIteration
        self.at += 1
        return self.dataset.index(self.at - 1, node)


class LoaderRef(ProgramObject):
    """A DataLoader: `len(loader)` batches; iter() gives a `Batches` iterator."""

    def __init__(
        self, data: Data, loader: torchdata.DataLoader, dataset: DatasetRef, workers: int = 0
    ):
        super().__init__(data.state)
        self.data = data
        self.loader = loader
        self.dataset = dataset
        self.workers = workers  # as the program asked; the loader reads in one process

    def describe(self) -> str:
        return "DataLoader"

    def length(self, node) -> int:
        return len(self.loader)

    def passes(self) -> int | None:
        return len(self.loader)

    def attribute(self, name: str, node):
        if name == "batch_size":
            return self.loader.batch_size
        if name == "dataset":
            return self.dataset
        if name == "num_workers":
            return self.workers
        return super().attribute(name, node)

    def iterate(self, node) -> ProgramObject:
        rows = len(self.dataset.dataset)
        if isinstance(self.loader.sampler, torchdata.RandomSampler) and rows > MAX_SHUFFLED:
            raise self.state.error(
                "limit",
                f"shuffling {rows:,} rows makes a list of {rows:,} indices; the limit is "
                f"{MAX_SHUFFLED:,} rows: shuffle a smaller dataset, or not at all",
                node,
            )
        with self.state.torch_rng():
            return Batches(self, iter(self.loader))


class Batches(ProgramObject):
    """One pass over a DataLoader: each next() checks the batch's size, then stacks it."""

    def __init__(self, loader: LoaderRef, batches):
        super().__init__(loader.state)
        self.loader = loader
        self.batches = batches

    def describe(self) -> str:
        return "DataLoader iterator"

    def iterate(self, node) -> ProgramObject:
        return self

    def next_value(self, node):
        state, library = self.state, self.loader.data.library
        size = min(self.loader.loader.batch_size, len(self.loader.dataset.dataset))
        sources = self.loader.dataset.dataset.tensors
        outputs = [
            ((size, *t.shape[1:]), size * math.prod(t.shape[1:]), t.element_size(), t.dtype)
            for t in sources
        ]
        library.budget.ops += 1
        library.budget.account("a DataLoader batch", outputs, 0.0, node)
        # PyTorch reads a batch row by row: a list of `size` indices, then `size` tuples of
        # one row of each tensor, before it stacks them (rows with no values weigh nothing)
        library.quotas.items(size, node, "DataLoader batch", made=size * (len(sources) + 1))
        with state.torch_rng():
            batch = next(self.batches)  # StopIteration at the end of the pass
        if state.shadow is not None:
            for b, src in zip(batch, sources, strict=False):
                where = state.shadow.device_of(src)
                if where.type != "cpu":
                    state.shadow.place(b, where)
        return list(batch)
