"""What makes a program's objects: the classes in the `nn`, `optim` and `torch.utils.data`
namespaces (rows of gradviz.program.allowlists.nntables) go to the part that owns them, layers
(gradviz.program.objects.layers), optimizers and schedulers (.optimizers), datasets and loaders
(.data). The evaluator hands every such call here."""

from __future__ import annotations

from gradviz.program.allowlists import nntables
from gradviz.program.objects.data import Data
from gradviz.program.objects.layers import Layers
from gradviz.program.objects.optimizers import Optimizers
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import ProgramObject


class Objects:
    """The makers of one run's objects, by kind of row."""

    def __init__(self, library: Library):
        self.layers = Layers(library)
        self.optimizers = Optimizers(library)
        self.data = Data(library)

    def make(self, label: str, spec: nntables.ObjectSpec, args, kwargs, node) -> ProgramObject:
        if spec.kind in ("layer", "container"):
            return self.layers.make(label, spec, args, kwargs, node)
        if spec.kind in ("optimizer", "scheduler"):
            return self.optimizers.make(label, spec, args, kwargs, node)
        return self.data.make(label, spec, args, kwargs, node)
