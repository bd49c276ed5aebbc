"""What a training or weights-evaluation worker sends the server: small frozen dataclasses.

No torch here (the Streamlit server unpickles these; importing this module must not import
torch, numpy or PIL): every field is plain data, str, bytes, numbers, None, and tuples or
dicts of them, which `gradviz.training.jobs.plain` checks before anything leaves a worker.

A training job (`gradviz.training.jobs.train_job`) yields, in order: `DataRead`, `Started`,
`Progress` events (kind "progress" at most every half second, "epoch" once per finished epoch,
"end" once), `Evaluating`; then it returns a `TrainingSummary`. Evaluating uploaded weights
yields `DataRead` and returns a `WeightsEvaluation`. A job that fails sends no event for it:
the worker's Job says how it ended (status, error type and message).

Every event has a `kind` (a class constant, or Progress's field), so a stream of them can be
told apart by kind as well as by type. No Streamlit here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class DataRead:
    """The worker has read the images: `describe` says how many, of which classes."""

    kind: ClassVar[str] = "data"
    describe: str


@dataclass(frozen=True)
class Started:
    """The network is built and on its device; training starts."""

    kind: ClassVar[str] = "start"
    arch: str
    device: str  # with the GPU's name: "cuda (NVIDIA H100 80GB HBM3)"


@dataclass(frozen=True)
class Progress:
    """One progress reading. kind: start | progress | epoch | end.

    loss and accuracy are the training batches' mean since the previous reading (None when no
    step ran since); test_accuracy is set on epoch readings when each epoch is evaluated;
    stopped on the end reading of a run that ended early ("stop requested" or "time limit")."""

    kind: str
    epoch: int
    epochs: int
    step: int
    steps_total: int
    images_seen: int
    images_total: int
    elapsed_s: float
    images_per_s: float
    eta_s: float | None
    loss: float | None = None
    accuracy: float | None = None
    test_accuracy: float | None = None
    lr: float | None = None
    stopped: str | None = None

    @property
    def fraction(self) -> float:
        """How much of the run is done, 0 to 1, counted in images."""
        return min(1.0, self.images_seen / self.images_total) if self.images_total else 0.0


@dataclass(frozen=True)
class Evaluating:
    """Training has ended; the worker is scoring the network on the test images."""

    kind: ClassVar[str] = "evaluating"


TrainingEvent = DataRead | Started | Progress | Evaluating


@dataclass(frozen=True)
class TrainingSummary:
    """A finished (or stopped) run, evaluated on the test split: what the page shows."""

    preset: str
    arch: str
    device: str  # as Started.device
    device_type: str  # cpu | cuda | mps
    data: str  # where the images came from
    stopped: str | None  # None: ran to the end; else why it ended early
    seconds: float  # of training, evaluations excluded
    images_seen: int
    images_per_s: float
    epochs_done: float
    accuracy: float  # on the test split
    flip_tta: bool  # each test image scored with its mirror image
    per_class: dict[str, float]
    report: tuple[str, ...]  # the tutorial's accuracy lines
    confusion_png: bytes
    grid_png: bytes
    weights: bytes  # the state_dict, torch.save'd
    history: tuple[Progress, ...] = field(default=())  # every reading but start
    placement: tuple[str, ...] = field(default=())  # with several processes: rank -> device


@dataclass(frozen=True)
class WeightsEvaluation:
    """Uploaded weights, scored on the chosen data's test split."""

    arch: str
    accuracy: float
    report: tuple[str, ...]
    confusion_png: bytes
    test_images: int
    data: str


# What may leave a worker besides plain values (gradviz.training.jobs.plain checks their fields).
PLAIN_CLASSES = (DataRead, Started, Progress, Evaluating, TrainingSummary, WeightsEvaluation)
