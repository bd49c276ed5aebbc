"""Save a trained model's state_dict, and load uploaded weights safely.

Loading uses torch.load(weights_only=True) and refuses, with a clear message, anything that is
not a state_dict of one of the known architectures: garbage bytes, pickles that would run code,
other objects, wrong keys or shapes, files over a size limit.
"""

from __future__ import annotations

import io
import pickle
import warnings

import torch
from torch import nn

from gradviz.training.models import ARCHITECTURES, build_model
from gradviz.training.settings import MAX_CHECKPOINT_BYTES
from gradviz.util.format import fmt_bytes
from gradviz.workers.protocol import ErrorKind


class CheckpointError(Exception):
    """Uploaded weights were refused; the message says why."""

    error_kind = ErrorKind.CHECKPOINT


def save_state_dict(model: nn.Module) -> bytes:
    """torch.save(model.state_dict()) into bytes (tensors moved to CPU so any host can load them)."""
    buffer = io.BytesIO()
    state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
    torch.save(state, buffer)
    return buffer.getvalue()


def read_state_dict(blob: bytes, max_bytes: int = MAX_CHECKPOINT_BYTES) -> dict[str, torch.Tensor]:
    """torch.load(weights_only=True) with every failure turned into a CheckpointError."""
    if len(blob) > max_bytes:
        raise CheckpointError(
            f"The file is {fmt_bytes(len(blob))}; weights for these networks are far smaller "
            f"(limit {fmt_bytes(max_bytes)}). Upload a state_dict saved by this page or the CLI."
        )
    if not blob:
        raise CheckpointError("The file is empty.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "unusual pickle protocol" notes
            state = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        # weights_only refuses a pickle that names a function or class ("unsupported GLOBAL");
        # anything else it cannot read (random bytes: "Unsupported operand") is no pickle.
        if "global" not in str(exc).lower():
            raise CheckpointError(
                "This is not a PyTorch weights file (torch.load could not read it). Upload the "
                ".pt file saved by this page or by `python -m gradviz train`."
            ) from exc
        raise CheckpointError(
            "Refused: the file holds Python objects beyond tensors (a pickle that could run code). "
            "Only a plain state_dict saved with torch.save(model.state_dict()) is accepted."
        ) from exc
    except Exception as exc:  # foreign bytes fail in many ways, even IndexError
        raise CheckpointError(
            "This is not a PyTorch weights file (torch.load could not read it). Upload the .pt file "
            "saved by this page or by `python -m gradviz train`."
        ) from exc
    if not isinstance(state, dict) or not state:
        raise CheckpointError(
            f"The file holds a {type(state).__name__}, not a state_dict (a dict of tensors)."
        )
    bad = [k for k, v in state.items() if not isinstance(k, str) or not isinstance(v, torch.Tensor)]
    if bad:
        raise CheckpointError(
            f"The state_dict has entries that are not tensors: {', '.join(map(str, bad[:5]))}."
        )
    return state


def _expected(arch: str, num_classes: int) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in build_model(arch, num_classes).state_dict().items()}


def match_architecture(state: dict[str, torch.Tensor], num_classes: int = 10) -> str:
    """The known architecture whose keys and shapes the state_dict has, or CheckpointError."""
    shapes = {k: tuple(v.shape) for k, v in state.items()}
    best, best_score = None, -1
    for arch in ARCHITECTURES:
        try:
            expected = _expected(arch, num_classes)
        except ValueError:
            continue
        if expected == shapes:
            return arch
        score = len(set(expected) & set(shapes))
        if score > best_score:
            best, best_score = arch, score
    assert best is not None
    expected = _expected(best, num_classes)
    missing = sorted(set(expected) - set(shapes))
    extra = sorted(set(shapes) - set(expected))
    wrong = sorted(k for k in set(expected) & set(shapes) if expected[k] != shapes[k])
    parts = []
    if missing:
        parts.append(f"missing keys {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}")
    if extra:
        parts.append(f"unexpected keys {', '.join(extra[:4])}{' ...' if len(extra) > 4 else ''}")
    if wrong:
        k = wrong[0]
        parts.append(f"wrong shape for {k}: {list(shapes[k])}, expected {list(expected[k])}")
    raise CheckpointError(
        f"These weights fit none of the networks here ({', '.join(ARCHITECTURES)}) for "
        f"{num_classes} classes; closest is {best}: {'; '.join(parts)}."
    )


def load_weights(
    blob: bytes, num_classes: int = 10, max_bytes: int = MAX_CHECKPOINT_BYTES
) -> tuple[str, nn.Module]:
    """Read uploaded bytes into a fresh model of the matching architecture: (arch, model in eval mode)."""
    state = read_state_dict(blob, max_bytes)
    arch = match_architecture(state, num_classes)
    model = build_model(arch, num_classes)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:  # dtype or other mismatch that the shape check did not catch
        raise CheckpointError(f"The weights do not load into {arch}: {exc}") from exc
    bad = [
        k
        for k, v in model.state_dict().items()
        if v.is_floating_point() and not torch.isfinite(v).all()
    ]
    if bad:
        raise CheckpointError(f"The weights contain NaN or infinite values ({', '.join(bad[:3])}).")
    return arch, model.eval()
