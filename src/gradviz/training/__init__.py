"""CIFAR-10 training: the PyTorch tutorial's small CNN, and a fast path far beyond it.

Modules (no Streamlit here): data (ImageFolder folders and CIFAR-10 into uint8 tensors),
models (TutorialNet exactly as the tutorial, FastNet), loop (presets, the `train` generator of
progress events, evaluate), checkpoint (state_dict save and safe load), pictures (confusion
matrix and prediction grid as PNG).
"""

CLASSES = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
