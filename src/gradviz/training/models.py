"""The networks: TutorialNet exactly as the PyTorch CIFAR-10 tutorial, and FastNet.

FastNet is a small all-convolutional net (conv-BN-GELU blocks with max-pooling and a global
max-pool head) whose widths scale with the device: narrow on CPU, wide on a GPU.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class TutorialNet(nn.Module):
    """The tutorial's network, layer for layer: conv 3->6->16 (5x5), 2x2 max-pool, fc 400-120-84-10."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def _conv_bn(c_in: int, c_out: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.GELU()]


class FastNet(nn.Module):
    """stem conv, then per width: max-pool 2x2 + conv-BN-GELU (x convs), global max-pool, linear."""

    def __init__(
        self,
        stem: int = 16,
        widths: tuple[int, ...] = (32, 64, 128),
        convs: int = 1,
        num_classes: int = 10,
        scale: float = 1 / 8,
    ) -> None:
        super().__init__()
        self.config = {"stem": stem, "widths": tuple(widths), "convs": convs}
        layers: list[nn.Module] = _conv_bn(3, stem)
        c = stem
        for w in widths:
            layers.append(nn.MaxPool2d(2))
            for i in range(convs):
                layers += _conv_bn(c if i == 0 else w, w)
            c = w
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c, num_classes, bias=False)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = torch.amax(x, dim=(2, 3))
        return self.head(x) * self.scale


#: Architectures known by name; checkpoints are matched against these.
ARCHITECTURES: dict[str, dict] = {
    "tutorial": {},
    "fast-cpu": {"stem": 16, "widths": (32, 64, 128), "convs": 1},
    "fast-gpu": {"stem": 64, "widths": (128, 256, 512), "convs": 2},
}


def build_model(arch: str, num_classes: int = 10) -> nn.Module:
    if arch == "tutorial":
        if num_classes != 10:
            raise ValueError("The tutorial network has 10 outputs; the data has a different count.")
        return TutorialNet()
    if arch not in ARCHITECTURES:
        raise ValueError(f"Unknown architecture {arch!r}; known: {', '.join(ARCHITECTURES)}.")
    return FastNet(num_classes=num_classes, **ARCHITECTURES[arch])


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


#: Input normalisation per architecture: (mean, std) per channel, applied to [0, 1] pixels.
#: The tutorial uses Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)); FastNet uses CIFAR-10 statistics.
TUTORIAL_NORM = ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
CIFAR10_NORM = ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))


def normalization_for(arch: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    return TUTORIAL_NORM if arch == "tutorial" else CIFAR10_NORM
