"""CIFAR-10 training: the PyTorch tutorial's small CNN, and a fast path far beyond it.

Modules (no Streamlit here): data (ImageFolder folders and CIFAR-10 into uint8 tensors),
models (TutorialNet exactly as the tutorial, FastNet), hardware (devices and the precision
plan), inputs (normalisation, batched augmentation, the tutorial's dataset), loop (the `train`
generator of progress events and the Trainer that runs it), evaluation (accuracy and the
confusion matrix), checkpoint (state_dict save and safe load),
pictures (confusion matrix and prediction grid as PNG), jobs (training and evaluation in worker
processes). Without torch, for the Streamlit server: settings (presets, devices from host
facts, caps and job limits), sources (folder checks, file counts, the CIFAR-10 download) and
events (the frozen dataclasses a training worker sends back). This package imports no torch.
"""

CLASSES = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
