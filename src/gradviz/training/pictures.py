"""Pictures of results as PNG bytes (Pillow only): the confusion matrix and a prediction grid."""

from __future__ import annotations

import io

import torch
from PIL import Image, ImageDraw, ImageFont


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizes
        return ImageFont.load_default()


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def confusion_png(confusion: torch.Tensor, classes: tuple[str, ...], cell: int = 44) -> bytes:
    """Rows: true class, columns: predicted. Cells shaded by the share of the row, with counts."""
    n = len(classes)
    conf = confusion.to(torch.int64).cpu()
    left, top = 70, 80
    width, height = left + n * cell + 10, top + n * cell + 30
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    font, small = _font(13), _font(11)
    draw.text((left, 4), "columns: predicted class", fill="black", font=font)
    draw.text((4, top - 18), "rows: true", fill="black", font=font)
    rows = conf.sum(1).clamp(min=1)
    for j, name in enumerate(classes):
        draw.text(
            (left + j * cell + 3, top - 36 + (j % 2) * 14), name[:7], fill="black", font=small
        )
    for i, name in enumerate(classes):
        y = top + i * cell
        draw.text((4, y + cell // 2 - 7), name[:9], fill="black", font=small)
        for j in range(n):
            x = left + j * cell
            share = float(conf[i, j]) / float(rows[i])
            if i == j:
                colour = (int(255 - 200 * share), int(255 - 90 * share), int(255 - 200 * share))
            else:
                colour = (255, int(255 - 200 * share), int(255 - 200 * share))
            draw.rectangle([x, y, x + cell - 1, y + cell - 1], fill=colour, outline=(210, 210, 210))
            text = str(int(conf[i, j]))
            dark = share > 0.6
            draw.text(
                (x + 4, y + cell // 2 - 7), text, fill="white" if dark else "black", font=small
            )
    total = int(conf.sum())
    correct = int(conf.diag().sum())
    draw.text((left, top + n * cell + 8), f"{correct} of {total} correct", fill="black", font=font)
    return _png(img)


def prediction_grid_png(
    images: torch.Tensor,
    truth: torch.Tensor,
    predicted: torch.Tensor,
    classes: tuple[str, ...],
    columns: int = 8,
    scale: int = 3,
) -> bytes:
    """Test images (uint8 [N,3,H,W]) upscaled, captioned 'pred / true', green when right, red when wrong."""
    n = int(images.shape[0])
    h, w = int(images.shape[2]) * scale, int(images.shape[3]) * scale
    caption = 30
    rows = max(1, -(-n // columns))
    tile_w = max(w, 96) + 8
    grid = Image.new("RGB", (columns * tile_w, rows * (h + caption + 8)), "white")
    draw = ImageDraw.Draw(grid)
    font = _font(11)
    for k in range(n):
        r, c = divmod(k, columns)
        x0, y0 = c * tile_w + 4, r * (h + caption + 8) + 4
        arr = images[k].permute(1, 2, 0).cpu().numpy()
        tile = Image.fromarray(arr).resize((w, h), Image.NEAREST)
        grid.paste(tile, (x0, y0))
        ok = int(predicted[k]) == int(truth[k])
        colour = (0, 130, 0) if ok else (200, 0, 0)
        draw.text((x0, y0 + h + 2), f"pred {classes[int(predicted[k])]}", fill=colour, font=font)
        draw.text((x0, y0 + h + 15), f"true {classes[int(truth[k])]}", fill="black", font=font)
    return _png(grid)
