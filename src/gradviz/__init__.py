"""gradviz: see what PyTorch's autograd and devices are doing.

One folder per part of the product, imports pointing down (docs/ARCHITECTURE.md):
ui and cli (faces) -> services -> program, training, speed, library -> graph -> devices
-> workers -> util. Only gradviz.ui and app.py import streamlit; the server side never
imports torch.

As a library (docs/library.md): `gradviz.draw(loss)` and `with gradviz.record() as rec:`.
Importing gradviz stays cheap and torch-free: the two functions import torch when called.
"""

from __future__ import annotations

import sys

from gradviz.util.version import VERSION

__version__ = VERSION


def draw(tensor, **options):
    """The autograd graph that ends at `tensor` (a loss, a model's output) as a Figure:
    `fig.save("graph.svg")` (svg, png, pdf, dot), `fig.svg()`, `fig.dot`; shown inline in
    notebooks. Its tensors are named after your variables where found.

    Options: params (dict name -> parameter, e.g. dict(model.named_parameters())),
    model (an nn.Module: its parameters' names and its layers as clusters), view ("values"
    or "classic", torchviz's drawing), direction ("TB" or "LR"), theme ("light", "dark",
    "print"), saved (show what backward functions saved), legend, module_depth (how deep
    layers' clusters go; with model=, 2 unless given), collapse_depth (fold each layer call at that depth into one
    node; automatic for big graphs; False: never), color ("role", "device", "grad"); or
    options (a gradviz.graph.model.DrawOptions, which those keywords then vary)."""
    from gradviz.library.figure import draw_tensor

    return draw_tensor(tensor, sys._getframe(1), **options)


def record(retain_grad: bool = True):
    """`with gradviz.record() as rec:` names every tensor the block makes after its variable
    (h[1], h[2] in loops) and records each layer's call (clusters); then `rec.draw(y)` takes
    draw's options. `retain_grad`: the named intermediate tensors keep their gradients
    (Tensor.retain_grad), so a drawing after backward() shows them."""
    from gradviz.library.recorder import Recorder

    return Recorder(retain_grad)
