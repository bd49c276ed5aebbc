"""Result pictures: valid PNGs of the expected size, colours that follow the data."""

import io

import torch
from PIL import Image

from gradviz.training import CLASSES
from gradviz.training.pictures import confusion_png, prediction_grid_png


def _open(blob: bytes) -> Image.Image:
    assert blob[:8] == b"\x89PNG\r\n\x1a\n"
    return Image.open(io.BytesIO(blob)).convert("RGB")


def test_confusion_png():
    conf = torch.zeros(10, 10, dtype=torch.int64)
    conf[0, 0] = 100  # all planes right: green cell
    conf[1, 2] = 50  # cars taken for birds: red cell
    img = _open(confusion_png(conf, CLASSES, cell=40))
    assert img.size == (70 + 400 + 10, 80 + 400 + 30)
    r, g, b = img.getpixel((70 + 38, 80 + 38))  # corner of cell (0, 0), away from the text
    assert g > r and g > b
    r, g, b = img.getpixel((70 + 2 * 40 + 38, 80 + 40 + 38))  # cell (1, 2)
    assert r > g and r > b
    assert img.getpixel((70 + 5 * 40 + 38, 80 + 5 * 40 + 38)) == (255, 255, 255)  # empty row


def test_prediction_grid_png():
    images = torch.full((10, 3, 32, 32), 0, dtype=torch.uint8)
    images[:, 0] = 255  # red images
    truth = torch.arange(10)
    pred = truth.clone()
    pred[3] = 4
    img = _open(prediction_grid_png(images, truth, pred, CLASSES, columns=5, scale=2))
    assert img.size[0] == 5 * (96 + 8)
    assert img.getpixel((4 + 10, 4 + 10)) == (255, 0, 0)
