"""gradviz: see what PyTorch's autograd and devices are doing.

One folder per part of the product, imports pointing down (docs/ARCHITECTURE.md):
ui and cli (faces) -> services -> program, training, speed -> graph -> devices -> workers
-> util. Only gradviz.ui and app.py import streamlit; the server side never imports torch.
"""

__version__ = "0.1.0"
