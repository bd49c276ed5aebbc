"""`DataLoader(ds, batch_size=...)` over a program's own dataset class (one with `__len__` and
`__getitem__`, gradviz.program.interpreter.plain_classes).

PyTorch never sees the program's object: its DataLoader is made over `range(len(ds))`, so
the sampling (shuffle, drop_last, the run's generator) is PyTorch's own and gives the same
indices, and each batch of indices is read here, one `ds[i]` at a time through the
interpreter (each a call of the program's `__getitem__`, under the run's caps), then put
together as PyTorch's default collate does: tensors stacked, numbers made a tensor, tuples
and lists position by position, dicts key by key, strings kept as a list.
"""

from __future__ import annotations

import torch
import torch.utils.data as torchdata

from gradviz.program.allowlists import tables
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import ProgramObject, type_name

MAX_SHUFFLED = 1_000_000  # as a TensorDataset's loader: rows a shuffled pass may permute
MAX_NESTING = 8  # tuples, lists and dicts inside one item


class ProgramLoader(ProgramObject):
    """A DataLoader over a program's own dataset: `len(loader)`, iter() gives batches."""

    def __init__(self, library: Library, dataset: ProgramObject, given: dict, node):
        super().__init__(library.state)
        self.library = library
        self.dataset = dataset
        self.batch_size = given.get("batch_size", 1)
        self.shuffle = bool(given.get("shuffle", False))
        self.drop_last = bool(given.get("drop_last", False))
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int):
            raise self.state.error(
                "type", "DataLoader: batch_size must be a positive integer", node
            )
        if self.batch_size < 1:
            raise self.state.error(
                "type", "DataLoader: batch_size must be a positive integer", node
            )

    def describe(self) -> str:
        return "DataLoader"

    def length(self, node) -> int:
        rows = self.dataset.length(node)
        whole, part = divmod(rows, self.batch_size)
        return whole + (1 if part and not self.drop_last else 0)

    def attribute(self, name: str, node):
        if name == "batch_size":
            return self.batch_size
        if name == "dataset":
            return self.dataset
        return super().attribute(name, node)

    def iterate(self, node) -> ProgramObject:
        rows = self.dataset.length(node)  # the program's __len__
        quotas = self.library.quotas
        # PyTorch makes each batch's list of indices (and a shuffle's permutation) at once
        quotas.items(min(rows, self.batch_size), node, "DataLoader batch", made=0)
        if self.shuffle and rows > MAX_SHUFFLED:
            raise self.state.error(
                "limit",
                f"shuffling {rows:,} rows makes a list of {rows:,} indices; the limit is "
                f"{MAX_SHUFFLED:,} rows: shuffle a smaller dataset, or not at all",
                node,
            )
        loader = torchdata.DataLoader(
            range(rows),
            batch_size=self.batch_size,
            shuffle=self.shuffle,
            drop_last=self.drop_last,
            collate_fn=list,
        )
        with self.state.torch_rng():
            return ProgramBatches(self, iter(loader))


class ProgramBatches(ProgramObject):
    """One pass over a ProgramLoader: each next() reads one batch through the interpreter."""

    def __init__(self, loader: ProgramLoader, indices):
        super().__init__(loader.state)
        self.loader = loader
        self.indices = indices

    def describe(self) -> str:
        return "DataLoader iterator"

    def iterate(self, node) -> ProgramObject:
        return self

    def next_value(self, node):
        with self.state.torch_rng():
            batch = next(self.indices)  # StopIteration at the end of the pass
        quotas = self.loader.library.quotas
        quotas.items(len(batch), node, "DataLoader batch")
        items = []
        for i in batch:
            quotas.step(node)
            items.append(self.loader.dataset.index(i, node))  # the program's __getitem__
        return self.collate(items, node, 0)

    def collate(self, items: list, node, depth: int):
        """PyTorch's default_collate, on the values a program's __getitem__ gave."""
        library, first = self.loader.library, items[0]
        if depth > MAX_NESTING:
            raise self.state.error("limit", "a dataset item is nested too deep to batch", node)
        if isinstance(first, torch.Tensor):
            self.same(items, torch.Tensor, node)
            return library.call_member(
                "torch.stack", tables.TORCH_FUNCTIONS["stack"], (items,), {}, node
            )
        if isinstance(first, bool | int | float):
            kind = float if isinstance(first, float) else int
            for item in items:
                if not isinstance(item, bool | int | float) or isinstance(item, float) != (
                    kind is float
                ):
                    raise self.mixed(item, node)
            dtype = torch.float64 if kind is float else None
            return library.call_member(
                "torch.tensor", tables.TORCH_FUNCTIONS["tensor"], (items,), {"dtype": dtype}, node
            )
        if isinstance(first, str):
            self.same(items, str, node)
            return list(items)
        if isinstance(first, tuple | list):
            self.same(items, tuple | list, node)
            if any(len(item) != len(first) for item in items):
                raise self.state.error(
                    "runtime",
                    "RuntimeError: each element in list of batch should be of equal size",
                    node,
                )
            return [
                self.collate([item[k] for item in items], node, depth + 1)
                for k in range(len(first))
            ]
        if isinstance(first, dict):
            self.same(items, dict, node)
            if any(item.keys() != first.keys() for item in items):
                raise self.mixed(items[-1], node)
            return {
                key: self.collate([item[key] for item in items], node, depth + 1) for key in first
            }
        raise self.state.error(
            "type",
            f"a DataLoader batches tensors, numbers, strings, tuples, lists and dicts; "
            f"__getitem__ gave a {type_name(first)}",
            node,
        )

    def same(self, items: list, kind, node) -> None:
        for item in items:
            if not isinstance(item, kind):
                raise self.mixed(item, node)

    def mixed(self, item, node):
        return self.state.error(
            "type",
            f"a DataLoader batch mixes kinds of values: __getitem__ gave a {type_name(item)} "
            "where the batch's first item is another kind",
            node,
        )
