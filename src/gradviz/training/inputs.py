"""What a network is fed: uint8 images made into normalised float input (`to_input`, for the
architecture's mean and std), the fast path's batched augmentation (`random_crop_flip`: random
crop with zero padding + horizontal flip, on the device), and the tutorial's dataset
(`TutorialImages`: ToTensor + Normalize, one PIL image at a time). Runs in workers: torch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from gradviz.training.data import Split
from gradviz.training.models import normalization_for

# ----------------------------------------------------------------------------- augmentation


def random_crop_flip(x: torch.Tensor, padding: int = 4, generator=None) -> torch.Tensor:
    """Random crop with zero padding + random horizontal flip, for a whole batch [B,C,H,W] at once."""
    b, c, h, w = x.shape
    dev = x.device
    padded = F.pad(x, (padding, padding, padding, padding))
    dy = torch.randint(0, 2 * padding + 1, (b,), device=dev, generator=generator)
    dx = torch.randint(0, 2 * padding + 1, (b,), device=dev, generator=generator)
    rows = (dy[:, None] + torch.arange(h, device=dev))[:, None, :, None]
    cols = (dx[:, None] + torch.arange(w, device=dev))[:, None, None, :]
    bi = torch.arange(b, device=dev)[:, None, None, None]
    ci = torch.arange(c, device=dev)[None, :, None, None]
    out = padded[bi, ci, rows, cols]
    flip = torch.rand(b, device=dev, generator=generator) < 0.5
    return torch.where(flip[:, None, None, None], out.flip(3), out)


def norm_tensors(arch: str, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    mean, std = normalization_for(arch)
    m = torch.tensor(mean, device=device).view(1, 3, 1, 1)
    s = torch.tensor(std, device=device).view(1, 3, 1, 1)
    return m, s


def to_input(images_u8: torch.Tensor, arch: str, channels_last: bool = False) -> torch.Tensor:
    """uint8 [B,3,H,W] -> normalised float (ToTensor + Normalize for the architecture)."""
    m, s = norm_tensors(arch, images_u8.device)
    x = (images_u8.float().div_(255) - m) / s
    return x.contiguous(memory_format=torch.channels_last) if channels_last else x


class TutorialImages(torch.utils.data.Dataset):
    """Like torchvision.datasets.CIFAR10 with the tutorial's transform: each item becomes a PIL
    image, then ToTensor() and Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)), one image at a time."""

    def __init__(self, split: Split, arch: str) -> None:
        from torchvision import transforms

        self.images = (
            split.images.permute(0, 2, 3, 1).contiguous().numpy()
        )  # HWC, as CIFAR10 keeps it
        self.labels = split.labels.tolist()
        mean, std = normalization_for(arch)
        self.transform = transforms.Compose(
            [transforms.ToTensor(), transforms.Normalize(mean, std)]
        )

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        from PIL import Image

        return self.transform(Image.fromarray(self.images[i])), self.labels[i]
