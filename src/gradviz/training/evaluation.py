"""Evaluation of a trained network on a split: overall and per-class accuracy and the
confusion matrix (`evaluate`, an `Evaluation`), the fast networks scored with their mirror
images too (`uses_flip_tta`). Runs in workers: torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from gradviz.training.data import Split
from gradviz.training.hardware import resolve_device
from gradviz.training.inputs import to_input

# ----------------------------------------------------------------------------- evaluation


def uses_flip_tta(arch: str) -> bool:
    """The fast networks, trained on randomly flipped images, are scored on each test image
    and its mirror image with their logits summed (test-time augmentation, as fast CIFAR-10
    recipes do: +0.6 and +1.4 points on the subset's test images after 20 epochs, two seeds).
    The tutorial's network is scored as the tutorial scores it."""
    return arch != "tutorial"


@dataclass
class Evaluation:
    accuracy: float
    per_class: dict[str, float]
    confusion: torch.Tensor  # int64 [C, C], rows true, columns predicted
    predictions: torch.Tensor  # int64 [N]
    classes: tuple[str, ...]
    flip_tta: bool = False  # each image scored with its mirror image, logits summed

    def report_lines(self) -> list[str]:
        """As the tutorial prints them."""
        how = " (each image and its mirror image, averaged)" if self.flip_tta else ""
        lines = [
            f"Accuracy of the network on the {len(self.predictions)} test images: {100 * self.accuracy:.1f} %{how}"
        ]
        lines += [
            f"Accuracy for class: {name:5s} is {100 * acc:.1f} %"
            for name, acc in self.per_class.items()
        ]
        return lines


@torch.no_grad()
def evaluate(
    model: nn.Module,
    split: Split,
    arch: str,
    device: str | torch.device = "cpu",
    classes: tuple[str, ...] | None = None,
    batch_size: int = 250,  # small: on a 690 MB host a batch of 1000 cost ~100 MB more at peak
    channels_last: bool = False,
    flip_tta: bool | None = None,
) -> Evaluation:
    """Overall and per-class accuracy and the confusion matrix on a split.

    flip_tta (default: uses_flip_tta(arch)) scores each image together with its mirror image."""
    dev = device if isinstance(device, torch.device) else resolve_device(device)
    tta = uses_flip_tta(arch) if flip_tta is None else bool(flip_tta)
    was_training = model.training
    model.eval()
    preds = []
    for i in range(0, len(split), batch_size):
        xb = to_input(split.images[i : i + batch_size].to(dev), arch, channels_last)
        logits = model(xb)
        if tta:
            logits = logits + model(xb.flip(3))
        preds.append(logits.argmax(1).cpu())
    if was_training:
        model.train()
    pred = torch.cat(preds) if preds else torch.zeros(0, dtype=torch.int64)
    num_classes = len(classes) if classes else int(model_output_count(model))
    names = tuple(classes) if classes else tuple(str(i) for i in range(num_classes))
    truth = split.labels
    confusion = torch.bincount(truth * num_classes + pred, minlength=num_classes**2).view(
        num_classes, num_classes
    )
    totals = confusion.sum(1)
    per_class = {
        names[c]: (float(confusion[c, c]) / float(totals[c])) if totals[c] else float("nan")
        for c in range(num_classes)
    }
    accuracy = float((pred == truth).float().mean()) if len(truth) else float("nan")
    return Evaluation(accuracy, per_class, confusion, pred, names, flip_tta=tta)


def model_output_count(model: nn.Module) -> int:
    last = [m for m in model.modules() if isinstance(m, nn.Linear)][-1]
    return last.out_features
