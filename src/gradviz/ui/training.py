"""CIFAR-10 training page: the tutorial's network live on CPU or GPU, and the fast preset.

Thin: all work is in gradviz.training, and none of it runs in the server. The page checks
the folder and counts its files; training runs in a worker process started for it
(gradviz.workers.jobs, gradviz.training.jobs) that reads the images itself, streams progress events
back and exits when done, so its memory returns to the system. The script follows the
job, redrawing a few st.empty placeholders per event. Stop (or any other click) makes
Streamlit rerun the page; the rerun finds the job in session state, asks it to stop if
Stop was pressed (it ends after the current step, evaluates what it learned and sends the
results), and follows it again. Uploaded weights are evaluated in a worker too. At most
GRADVIZ_TRAINING_JOBS trainings run at once on the server (default 1); others wait in line
for a while, then are told the server is busy.

The server never imports torch or numpy for this page (torch alone is about 190 MB of its
memory): presets, caps and limits come from gradviz.training.settings, the folder checks and
the CIFAR-10 download from gradviz.training.sources, the devices from gradviz.services.host.facts()
(asked of a worker), and the workers send back only plain data: the frozen dataclasses of
gradviz.training.events (numbers, text, PNG bytes), read here by field.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.runtime.uploaded_file_manager import UploadedFile

from gradviz.services import host
from gradviz.services.following import Followed
from gradviz.services.jobs import start_in_line
from gradviz.training.events import (
    DataRead,
    Evaluating,
    Progress,
    Started,
    TrainingSummary,
    WeightsEvaluation,
)
from gradviz.training.settings import (
    EVALUATE_SECONDS,
    MAX_BATCH,
    MEGABYTE,
    PRESETS,
    STOP_REASONS,
    TrainingDevices,
    effective_time_limit,
    evaluate_limits,
    max_batch_size,
    max_training_seconds,
    max_upload_bytes,
    preset_unavailable_reason,
    training_limits,
)
from gradviz.training.sources import (
    CIFAR10_FOLDER,
    DataError,
    default_cache_dir,
    download_cifar10,
    public_folder_choices,
    resolve_folder,
    scan_image_folder,
    shared_subset_dir,
    torchvision_missing,
)
from gradviz.ui import charts, training_ddp, training_runs, uploads
from gradviz.ui.common import png, show_unexpected, tab_open
from gradviz.ui.training_runs import X_SEEN
from gradviz.util.busy import Busy
from gradviz.util.hosting import public_mode
from gradviz.util.mdtext import escape, message
from gradviz.util.resources import available_cpus

FOLDER = "Local folder (ImageFolder layout: train/<class>, test/<class>)"
CIFAR = "CIFAR-10, downloaded once into a cache folder"
RUN_KEY = "training_run"  # the job in progress: {"job": a Followed, "settings"}
RESULT_KEY = "training_result"  # the last finished run, drawn on every rerun
UPLOAD_KEY = "training_upload_result"  # (file name, outcome) of the last upload, drawn on reruns
UPLOAD_WIDGET = "training_upload"  # the uploader's key, with UPLOAD_ROUND after it
UPLOAD_ROUND = "training_upload_round"  # one more per upload taken: the uploader starts empty
NO_PUBLIC_FOLDER = (
    "This public server offers no image folder (its operator lists them in "
    "GRADVIZ_DATA_ROOTS); choose CIFAR-10."
)
QUEUE_S = 30.0  # how long a Train click waits for another visitor's run to end
ABANDON_S = 60.0  # a run nobody follows for this long (a closed tab) is stopped
ADOPT_S = 3.0  # a run no script run follows this long after the script stopped is stopped
POLL_S = 0.5  # while a run streams, the page redraws (where Streamlit can stop it) this often
PAGE_STOPPED = "the page was stopped (Streamlit's Stop, top right), so the run was stopped"


class Source:
    """Checked data choice: what the worker reads, and the caption for the page."""

    def __init__(self, kind: str, path: Path, caption: str):
        self.kind, self.path, self.caption = kind, path, caption

    def spec(self) -> dict:
        return {"kind": self.kind, "path": str(self.path)}


@st.cache_data(show_spinner=False, ttl=30, max_entries=32)
def _scan(path: str) -> str:
    return scan_image_folder(path).describe()


def _load_source(source: str, folder: str, cache_dir: str) -> Source:
    """Check the chosen data without reading images (that happens in the worker).

    On a public server the cache folder is the operator's (GRADVIZ_CACHE): cache_dir is
    ignored, and nothing a visitor sends decides where anything is created or written."""
    public = public_mode()
    if source == FOLDER:
        if public and not folder:
            raise DataError(NO_PUBLIC_FOLDER)
        path = resolve_folder(folder)
        return Source("folder", path, _scan(str(path)))
    if missing := torchvision_missing():  # before a 170 MB download it could not read
        raise DataError(missing)
    if public:
        root = default_cache_dir().expanduser().resolve()
    else:
        root = resolve_folder(cache_dir.strip() or str(default_cache_dir()))
    if not (root / CIFAR10_FOLDER / "batches.meta").is_file():
        bar = st.progress(0.0, text="Checking the CIFAR-10 cache...")

        def progress(done: int, total: int | None) -> None:
            if total:
                bar.progress(
                    min(done / total, 1.0),
                    text=f"Downloading CIFAR-10: {done / 1e6:.1f} / {total / 1e6:.1f} MB",
                )

        try:
            download_cifar10(root, progress=progress)
        finally:
            bar.empty()
    return Source("cifar", root, f"CIFAR-10 in {root}: 50,000 training and 10,000 test images")


def _devices() -> tuple[TrainingDevices, str | None]:
    """The devices this host can train on, from host.facts() (asked of a worker once, so the
    server never imports torch); CPU only, with the reason, when that fails."""
    try:
        return TrainingDevices.from_facts(host.facts()), None
    except Exception as exc:  # a worker that cannot start: training could not either
        return TrainingDevices(cuda=False, mps=False), f"{type(exc).__name__}: {exc}"


def _fmt_eta(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _status_text(ev: Progress) -> str:
    parts = [
        f"epoch {ev.epoch}/{ev.epochs}",
        f"step {ev.step:,}/{ev.steps_total:,}",
        f"{ev.images_per_s:,.0f} images/s",
        f"ETA {_fmt_eta(ev.eta_s)}",
    ]
    if ev.loss is not None:
        parts.append(f"loss {ev.loss:.3f}")
    if ev.accuracy is not None:
        parts.append(f"train accuracy {100 * ev.accuracy:.1f}%")
    return " · ".join(parts)


def curve_rows(history: list[Progress]) -> tuple[list[dict], list[dict]]:
    """Loss, and accuracy (train; test once per epoch), against images seen, as chart rows.

    One row per reading, in long form (a `series` column for accuracy): each series' line
    joins its own readings, so the test accuracy measured once per epoch is one line too."""
    loss, acc = [], []
    for h in history:
        if h.kind == "start":
            continue
        x = int(h.images_seen)
        if h.loss is not None:
            loss.append({X_SEEN: x, "loss": float(h.loss)})
        for value, series in ((h.accuracy, "train accuracy"), (h.test_accuracy, "test accuracy")):
            if value is not None:
                acc.append({X_SEEN: x, "series": series, "accuracy": float(value)})
    return loss, acc


def _chart(box, rows: list[dict], y: str, color: str | None = None) -> None:
    spec = charts.line_chart(
        rows, X_SEEN, y, color=color, points=len(rows) < 60, y_zero=False, height=220
    )
    box.vega_lite_chart(spec=spec, width="stretch")


def _draw_curves(history: list[Progress], loss_box, acc_box) -> None:
    loss, acc = curve_rows(history)
    if not loss:
        return
    _chart(loss_box, loss, "loss")
    _chart(acc_box, acc, "accuracy", "series")


def _keep_result(result: TrainingSummary) -> None:
    st.session_state[RESULT_KEY] = result
    training_runs.keep(result, *curve_rows(result.history))


def _start_training(source: Source, settings: dict) -> None:
    """Wait for a free training slot (showing the line), then start the worker."""
    wait_box = st.empty()

    def waiting(running: int, ahead: int, size: int) -> None:
        wait_box.info(
            f"Another visitor is training ({running} of {size} training "
            f"slot{'s' if size != 1 else ''} in use, {ahead} waiting ahead of you); "
            f"yours starts when one ends (waiting up to {QUEUE_S:.0f} s)."
        )

    run_settings = dict(settings)
    run_settings["time_limit"] = effective_time_limit(settings["time_limit"])
    limits = training_limits(run_settings["time_limit"], available_cpus())
    limits = replace(limits, abandon_after=ABANDON_S)
    try:
        job = start_in_line(
            "train", (source.spec(), run_settings), limits, "training", QUEUE_S, waiting
        )
    finally:
        wait_box.empty()
    st.session_state.pop(RESULT_KEY, None)
    st.session_state[RUN_KEY] = {"job": Followed(job), "settings": run_settings}


def _follow(run: dict) -> None:
    """Draw the job's progress live until it ends, then keep its results (or say why not).

    A click on any widget (the page's Stop too) or Streamlit's own Stop (top right), or the
    end of the session, stops the script at its next element (StopException); a click starts
    the next script run at once, which follows the run again (adopts it). When none does
    (Streamlit's Stop, a session gone), the run is asked to stop ADOPT_S later (it still sends
    what it learned) and the page's next run shows that result and why it ended. A closed
    tab ends it (services.following)."""
    followed = run["job"]
    job = followed.job
    live = st.empty()
    with live.container():
        st.button(
            "Stop",
            key="training_stop",
            icon=":material/stop_circle:",
            help="Stop after this step and keep what was learned",
        )
        status = st.empty()
        bar = st.progress(0.0)
        left, right = st.columns(2)
        with left:
            loss_box = st.empty()
        with right:
            acc_box = st.empty()
    if followed.page_stopped:
        status.info(f"{PAGE_STOPPED[:1].upper()}{PAGE_STOPPED[1:]}; evaluating what it learned...")
    elif job.stop_requested:
        status.info("Stopping after this step, then evaluating what was learned...")
    else:
        status.info("Starting the training worker and reading the images...")
    history: list[Progress] = []
    shown = (0.0, "")
    try:
        for ev in followed.events(POLL_S, tab_open, since=0):
            if ev is None:
                bar.progress(*shown)  # on every poll: where Streamlit can stop the script
            else:
                shown = _draw_event(ev, job, history, status, (loss_box, acc_box)) or shown
    except StopException:
        followed.stop_unless_read_within(ADOPT_S)
        raise
    live.empty()
    if not job.finished:  # the tab closed: the run was ended, nobody sees it
        return
    st.session_state.pop(RUN_KEY, None)
    if job.status == "done":
        _keep_result(_explain_stop(job.result, job.abandoned, followed.page_stopped))
    elif job.status == "error" and job.error_type in ("DataError", "DeviceError", "ValueError"):
        st.error(message(job.message))
    else:
        st.error(message(job.describe_failure("training")) + " Nothing else was affected.")


def _draw_event(ev, job, history: list[Progress], status, boxes) -> tuple | None:
    """Show one event of the run; for a reading, the progress bar's (fraction, text)."""
    if isinstance(ev, DataRead):
        status.info(f"Read {ev.describe}. Building the network...")
    elif isinstance(ev, Started):
        status.info(f"Training {ev.arch} on {ev.device}...")
    elif isinstance(ev, Evaluating):
        status.info("Evaluating on the test images...")
    elif isinstance(ev, Progress):
        history.append(ev)
        if not job.stop_requested:
            status.info(_status_text(ev))
        if len(job.events) - len(history) < 8 or ev.kind != "progress":  # skip in a backlog
            _draw_curves(history, *boxes)
        return ev.fraction, f"{100 * ev.fraction:.0f}% of {ev.images_total:,} images"
    return None


def _explain_stop(
    result: TrainingSummary, abandoned: bool, page_stopped: bool = False
) -> TrainingSummary:
    """The result with its stop reason in the page's words."""
    if page_stopped and result.stopped == "stop requested":
        return replace(result, stopped=PAGE_STOPPED)
    if abandoned and result.stopped == "stop requested":
        return replace(result, stopped="the page was left, so the run was stopped")
    return replace(result, stopped=STOP_REASONS.get(result.stopped, result.stopped))


def _init_defaults() -> None:
    """Defaults go into session state once, so widgets never get both a value and a state."""
    ss = st.session_state
    if "training_folder" not in ss:
        default = shared_subset_dir()
        ss["training_folder"] = str(default) if default else ""
    if not public_mode():
        ss.setdefault("training_cache", str(default_cache_dir()))
    ss.setdefault("training_preset", "fast")
    ss.setdefault("training_device", "auto")
    ss.setdefault("training_time_limit", 0.0)
    for name, p in PRESETS.items():
        ss.setdefault(f"training_epochs_{name}", p.epochs)
        ss.setdefault(f"training_batch_{name}", min(p.batch_size, max_batch_size()))
        ss.setdefault(f"training_lr_{name}", p.lr)


def _folder_field() -> str:
    """A typed path on a local run; on a public server only a choice among the operator's
    folders (a visitor cannot name any other path, so none is probed or echoed)."""
    if not public_mode():
        return st.text_input(
            "Folder",
            key="training_folder",
            help="ImageFolder layout: train/<class>/*.jpg and test/<class>/*.jpg",
        )
    choices = [str(p) for p in public_folder_choices()]  # a few stat calls: not cached
    if not choices:
        st.info(NO_PUBLIC_FOLDER)
        return ""
    subset = shared_subset_dir()
    return st.selectbox(
        "Folder",
        choices,
        index=choices.index(str(subset)) if str(subset) in choices else 0,
        key="training_public_folder",
        help="The image folders this public server's operator offers (GRADVIZ_DATA_ROOTS).",
    )


def _cache_field() -> str:
    """The CIFAR-10 cache folder: chosen on a local run, the operator's on a public server
    (shown, not a widget, so no visitor can send another)."""
    if not public_mode():
        return st.text_input("Cache folder", key="training_cache")
    st.markdown(f"Cache folder: `{default_cache_dir()}`")
    st.caption(
        "Set by this server's operator with GRADVIZ_CACHE (the cache is $GRADVIZ_CACHE/cifar10, "
        "default ~/.cache/gradviz/cifar10); visitors cannot change it."
    )
    return ""


def _settings_form() -> dict:
    _init_defaults()
    c1, c2 = st.columns([3, 2])
    with c1:
        source = st.radio("Data", [FOLDER, CIFAR], key="training_source")
        if source == FOLDER:
            folder, cache_dir = _folder_field(), ""
        else:
            folder, cache_dir = "", _cache_field()
            st.caption(
                "About 170 MB is downloaded once with a progress bar; later runs read the cache."
            )
    with c2:
        found, problem = _devices()
        devices = found.choices()
        if st.session_state["training_device"] not in devices:
            st.session_state["training_device"] = "auto"
        device_choice = st.selectbox("Device", devices, key="training_device")
        if problem:
            st.caption(
                f"Could not ask a worker which devices this host has ({escape(problem)}); CPU only."
            )
        else:
            off = [f"{d}: {why}" for d in ("cuda", "mps") if (why := found.unavailable_reason(d))]
            if off:
                st.caption("Not on this host: " + "; ".join(off) + ".")
        preset = st.selectbox("Preset", list(PRESETS), key="training_preset")
        st.caption(PRESETS[preset].description)
        nproc = training_ddp.processes_field(device_choice)
    c3, c4, c5, c6 = st.columns(4)
    epochs = c3.number_input("Epochs", 1, 200, key=f"training_epochs_{preset}")
    max_batch = max_batch_size()
    key = f"training_batch_{preset}"
    if st.session_state.get(key, 1) > max_batch:  # e.g. a value kept from before public mode
        st.session_state[key] = max_batch
    batch_size = c4.number_input(
        "Batch size",
        1,
        max_batch,
        key=key,
        help=None
        if max_batch == MAX_BATCH
        else f"At most {max_batch} on this public server, to fit its memory.",
    )
    lr = c5.number_input("Learning rate", 1e-5, 10.0, format="%.4f", key=f"training_lr_{preset}")
    time_limit = c6.number_input("Time limit (s, 0 = none)", 0.0, 3600.0, key="training_time_limit")
    return {
        "source": source,
        "folder": folder,
        "cache_dir": cache_dir,
        "device_choice": device_choice,
        "preset": preset,
        "epochs": int(epochs),
        "batch_size": int(batch_size),
        "lr": float(lr),
        "time_limit": float(time_limit),
        "nproc": nproc,
    }


def _show_result(result: TrainingSummary) -> None:
    st.subheader("Results")
    if result.stopped:
        st.warning(
            f"Training ended early ({escape(result.stopped)}) after {result.epochs_done:.2f} epochs; "
            "these are the results of what it had learned."
        )
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(
        "Test accuracy",
        f"{100 * result.accuracy:.1f}%",
        help="Each test image scored together with its mirror image (the fast networks learn "
        "from flipped images too)"
        if result.flip_tta
        else "Each test image scored once, as the tutorial does",
    )
    m2.metric("Training time", f"{result.seconds:.1f} s")
    m3.metric("Images/s", f"{result.images_per_s:,.0f}")
    m4.metric("Device", result.device)
    st.caption(escape(f"{result.preset} preset, {result.arch} network, {result.data}."))
    loss, acc = curve_rows(result.history)
    if loss:
        left, right = st.columns(2)
        _chart(left, loss, "loss")
        _chart(right, acc, "accuracy", "series")
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Per-class accuracy** (as the tutorial prints it)")
        st.code("\n".join(result.report), language=None, wrap_lines=True)
    with right:
        st.markdown("**Confusion matrix**")
        png(result.confusion_png, "confusion matrix of the test images")
    st.markdown("**Test images: predicted and true labels**")
    png(result.grid_png, "test images with predicted and true labels")
    st.download_button(
        "Download weights (state_dict)",
        data=result.weights,
        file_name=f"gradviz-{result.arch}.pt",
        mime="application/octet-stream",
        key="training_download",
    )


def _evaluate_upload(source: Source | None) -> None:
    """Weights uploaded here are handed to a worker (or refused) on the run that sees them,
    and their bytes dropped from the server then: the page is drawn again with an empty
    uploader (a new key) and the evaluation, which stays shown until the next upload."""
    st.subheader("Evaluate uploaded weights")
    cap = max_upload_bytes()
    upload = st.file_uploader(
        "A state_dict saved by this page or the CLI (.pt)",
        type=["pt", "pth", "bin"],
        key=f"{UPLOAD_WIDGET}_{st.session_state.get(UPLOAD_ROUND, 0)}",
        max_upload_size=cap // MEGABYTE,
        disabled=source is None,
        help="Choose data above first: the weights are evaluated on its test images."
        if source is None
        else None,
    )
    if upload is not None:
        _take(upload, source, cap)
        st.rerun()  # drawn again with an empty uploader, the outcome below it
    done = st.session_state.get(UPLOAD_KEY)
    if done is None:
        return
    name, (status, value) = done
    if status == "refused":
        st.error(f"Weights refused: {message(value)}")
    elif status != "ok":
        st.error(f"Could not evaluate the weights: {message(value)}")
    else:
        _show_evaluation(value, name)


def _take(upload: UploadedFile, source: Source | None, cap: int) -> None:
    """Hand an upload to a worker, or refuse it; either way its bytes leave the server's
    upload store now, and the next run draws an empty uploader."""
    name = upload.name
    try:
        if upload.size > cap:
            outcome = (
                "refused",
                f"the file is {upload.size / MEGABYTE:.1f} MB; weights for these networks are "
                f"far smaller (limit {cap // MEGABYTE} MB).",
            )
        elif source is None:
            outcome = ("failed", "choose data above first, then upload the weights again.")
        else:
            outcome = _evaluate_in_worker(source, upload)
    finally:
        uploads.forget(upload)
        st.session_state[UPLOAD_ROUND] = st.session_state.get(UPLOAD_ROUND, 0) + 1
    st.session_state[UPLOAD_KEY] = (name, outcome)


def _evaluate_in_worker(
    source: Source, upload: UploadedFile
) -> tuple[str, WeightsEvaluation | str]:
    """("ok", the evaluation), or ("refused" | "data" | "failed", why). The upload's bytes
    leave the server's upload store before the job waits for its slot; the job hands its
    copy to the worker and keeps none."""
    with st.spinner("Evaluating the weights in a worker process..."):
        limits = evaluate_limits(available_cpus())
        args = (source.spec(), upload.getvalue())
        uploads.forget(upload)
        try:
            job = start_in_line("evaluate_weights", args, limits, "weights", QUEUE_S)
        except Busy as exc:
            return "failed", str(exc)
        finally:
            del args
        job.wait(EVALUATE_SECONDS + 30)
    if job.status == "done":
        return "ok", job.result
    if job.status == "error" and job.error_type == "CheckpointError":
        return "refused", job.message
    if job.status == "error" and job.error_type == "DataError":
        return "data", job.message
    return "failed", job.describe_failure("evaluating the weights")


def _show_evaluation(value: WeightsEvaluation, name: str) -> None:
    st.success(
        f"{value.arch} weights: {100 * value.accuracy:.1f}% on {value.test_images:,} "
        f"test images ({escape(value.data)}); the file was {escape(name)}."
    )
    left, right = st.columns([2, 3])
    left.code("\n".join(value.report), language=None, wrap_lines=True)
    with right:
        png(value.confusion_png, "confusion matrix of the uploaded weights")


def _intro() -> None:
    st.title("CIFAR-10 training")
    st.markdown(
        "The PyTorch tutorial trains a small CNN on CIFAR-10 with batches of 4 and a `.item()` "
        "every step. Train it here on a real device and watch why it is slow, then run the "
        "**fast** preset: the data lives on the device as tensors, batches are large, augmentation "
        "runs on whole batches, and the host reads the loss only when the chart updates."
    )
    if missing := torchvision_missing():
        st.warning(message(missing), icon=":material/info:")
    if public_mode():
        st.caption(
            "Public server: data comes only from the folders and the CIFAR-10 cache its "
            "operator set up. Training runs in a separate worker process, at most "
            f"{max_training_seconds():.0f} s."
        )


def _checked_source(settings: dict) -> Source | None:
    """The chosen data, checked (its caption shown), or None with the reason shown."""
    source = None
    try:
        source = _load_source(settings["source"], settings["folder"], settings["cache_dir"])
        st.caption(message(source.caption))
    except DataError as exc:
        st.error(message(exc))
    except Exception as exc:  # last resort: keep the page up
        show_unexpected(exc, "checking the data")
    return source


def _current_run() -> dict | None:
    """The run this session started and still follows (asked to stop if Stop was pressed)."""
    run = st.session_state.get(RUN_KEY)
    if run and not isinstance(run.get("job"), Followed):
        st.session_state.pop(RUN_KEY, None)  # not a run this page started: forget it
        run = None
    if run and st.session_state.get("training_stop"):
        run["job"].job.stop()
    return run


def _retire(run: dict) -> None:
    """A Train click while this session still keeps an earlier run (running on unseen after
    Streamlit's Stop, or finished since): that run ends here and is never shown as the new
    one; a result it finished with goes to the table of this session's runs only."""
    st.session_state.pop(RUN_KEY, None)
    followed = run["job"]
    followed.retire()  # its CPU free before the new run's images/s are measured
    job = followed.job
    if job.status == "done":
        _keep_result(_explain_stop(job.result, job.abandoned, followed.page_stopped))
        st.session_state.pop(RESULT_KEY, None)


def _run_area(run: dict | None, start: bool, source: Source | None, settings: dict) -> list:
    """Follow the running job, or start one on a Train click; what went wrong, as callables
    that draw it (drawn again with the results)."""
    messages: list = []
    if run:
        try:
            _follow(run)
        except Exception as exc:
            st.session_state.pop(RUN_KEY, None)
            messages.append(lambda exc=exc: show_unexpected(exc, "following the training run"))
    elif start and source is not None:
        try:
            # Checked here, not only in the worker: the server knows what this set-up lacks.
            if reason := preset_unavailable_reason(settings["preset"]):
                raise DataError(reason)
            _start_training(source, settings)
            _follow(st.session_state[RUN_KEY])
        except (Busy, DataError) as exc:
            text = message(exc)
            messages.append(lambda text=text: st.error(text))
        except Exception as exc:
            st.session_state.pop(RUN_KEY, None)
            messages.append(lambda exc=exc: show_unexpected(exc, "training"))
    return messages


def page() -> None:
    _intro()
    settings = _settings_form()
    source = _checked_source(settings)
    run = _current_run()
    start = st.button(
        "Train",
        type="primary",
        icon=":material/model_training:",
        disabled=source is None,
        key="training_start",
    )
    # One slot for the live run and for the results: when a run starts, the previous run's
    # results (which Streamlit would otherwise leave on screen, faded, until the script run
    # ends, with a download button still offering the old weights) are replaced at once.
    if start and run and source is not None:
        _retire(run)
        run = None
    area = st.empty()
    messages: list = []  # drawn again with the results, which replace what the slot held
    if run or (start and source is not None):
        with area.container():
            messages = _run_area(run, start, source, settings)
    # Drawn from session state, so the results look the same on every later rerun. A failed
    # run's own message (drawn by _follow) stays in the slot: it leaves no results behind.
    result = st.session_state.get(RESULT_KEY)
    if result or messages:
        with area.container():
            for show in messages:
                show()
            if result:
                _show_result(result)
    training_runs.section(_devices()[0].unavailable_reason("cuda"))
    try:
        _evaluate_upload(source)
    except Busy as exc:
        st.error(f"Could not evaluate the weights now: {escape(exc)}")
    except Exception as exc:  # last resort: keep the page up
        show_unexpected(exc, "evaluating the uploaded weights")
