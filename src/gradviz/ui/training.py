"""CIFAR-10 training page: the tutorial's network live on CPU or GPU, and the fast preset.

Thin: all work is in gradviz.training. Training runs inside the script run and redraws only a
few st.empty placeholders per progress event. Stop (or any other click) makes Streamlit rerun
the page, which interrupts the loop between steps; the next run finds the live model in
session state, evaluates it and shows what it learned so far.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st
import torch

from gradviz.training.checkpoint import CheckpointError, load_weights, save_state_dict
from gradviz.training.data import (
    DataError,
    Dataset,
    default_cache_dir,
    display_classes,
    download_cifar10,
    load_cifar10,
    load_image_folder,
    shared_subset_dir,
    torchvision_missing,
)
from gradviz.training.loop import (
    PRESETS,
    DeviceError,
    Event,
    available_devices,
    device_unavailable_reason,
    evaluate,
    resolve_device,
    train,
)
from gradviz.training.pictures import confusion_png, prediction_grid_png
from gradviz.ui.common import show_unexpected

FOLDER = "Local folder (ImageFolder layout: train/<class>, test/<class>)"
CIFAR = "CIFAR-10, downloaded once into a cache folder"
RUN_KEY = "training_run"  # the run in progress (or interrupted): live model + history
RESULT_KEY = "training_result"  # the last finished run, drawn on every rerun
COMPARE_KEY = "training_by_device"  # (preset, device type) -> numbers, for the CPU-vs-GPU table
GRID_IMAGES = 24


@st.cache_resource(show_spinner="Reading images into tensors...", max_entries=2)
def _folder_dataset(path: str) -> Dataset:
    return load_image_folder(path)


@st.cache_resource(show_spinner="Reading CIFAR-10...", max_entries=1)
def _cifar_dataset(root: str) -> Dataset:
    return load_cifar10(root, download=False)


def _load_data(source: str, folder: str, cache_dir: str) -> Dataset:
    if source == FOLDER:
        if not folder.strip():
            raise DataError(
                "Enter a folder with train/<class>/*.jpg and test/<class>/*.jpg, or choose CIFAR-10."
            )
        return _folder_dataset(str(Path(folder.strip()).expanduser().resolve()))
    if missing := torchvision_missing():  # before a 170 MB download it could not read
        raise DataError(missing)
    root = Path(cache_dir.strip() or default_cache_dir()).expanduser()
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
    return _cifar_dataset(str(root))


def _fmt_eta(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _status_text(ev: Event) -> str:
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


def _curves(history: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Loss and accuracy (train; test once per epoch) against images seen, gaps joined up."""
    frame = pd.DataFrame([h for h in history if h.get("kind") != "start"])
    if frame.empty or "loss" not in frame:
        return pd.DataFrame(), pd.DataFrame()
    frame = frame.set_index("images_seen")
    loss = frame[["loss"]].astype(float).dropna()
    acc = pd.DataFrame({"train accuracy": frame["accuracy"].astype(float)})
    if "test_accuracy" in frame and frame["test_accuracy"].notna().any():
        acc["test accuracy"] = frame["test_accuracy"].astype(float)
    acc = acc.interpolate(limit_area="inside").dropna(how="all")
    return loss, acc


def _draw_curves(history: list[dict], loss_box, acc_box) -> None:
    loss, acc = _curves(history)
    if loss.empty:
        return
    loss_box.line_chart(loss, x_label="images seen", y_label="loss", height=220)
    acc_box.line_chart(acc, x_label="images seen", y_label="accuracy", height=220)


def _finish(run: dict, data: Dataset, stopped: str | None) -> None:
    """Evaluate the run's model on the test split and keep the results for every rerun."""
    data = run.get("data", data)
    model, arch = run["model"], run["arch"]
    device = resolve_device(run["device_choice"])
    classes = display_classes(data.classes)
    ev = evaluate(model, data.test, arch, device, classes)
    pick = torch.randperm(len(data.test), generator=torch.Generator().manual_seed(0))[:GRID_IMAGES]
    last = run["history"][-1] if run["history"] else {}
    seconds = float(last.get("elapsed_s") or 0.0)
    seen = int(last.get("images_seen") or 0)
    result = {
        "preset": run["preset"],
        "arch": arch,
        "device": run["device"],
        "device_type": device.type,
        "data": data.source,
        "stopped": stopped,
        "seconds": seconds,
        "images_seen": seen,
        "images_per_s": seen / seconds if seconds > 0 else 0.0,
        "epochs_done": seen / max(1, len(data.train)),
        "accuracy": ev.accuracy,
        "per_class": ev.per_class,
        "report": ev.report_lines(),
        "confusion_png": confusion_png(ev.confusion, classes),
        "grid_png": prediction_grid_png(
            data.test.images[pick], data.test.labels[pick], ev.predictions[pick], classes
        ),
        "weights": save_state_dict(model),
        "history": list(run["history"]),
    }
    st.session_state[RESULT_KEY] = result
    compare = st.session_state.setdefault(COMPARE_KEY, {})
    compare[(run["preset"], device.type)] = {
        "preset": run["preset"],
        "device": run["device"],
        "seconds": round(seconds, 2),
        "images/s": round(result["images_per_s"]),
        "test accuracy": round(ev.accuracy, 4),
        "epochs": round(result["epochs_done"], 2),
    }
    st.session_state.pop(RUN_KEY, None)


def _run_training(data: Dataset, settings: dict) -> None:
    st.session_state.pop(RESULT_KEY, None)
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
    events = train(
        data,
        settings["preset"],
        settings["device_choice"],
        epochs=settings["epochs"],
        batch_size=settings["batch_size"],
        lr=settings["lr"],
        time_limit=settings["time_limit"] or None,
        eval_each_epoch=True,
        progress_every_s=0.5,
    )
    run: dict | None = None
    for ev in events:
        if ev.kind == "start":
            res = ev.result
            run = {
                **settings,
                "model": res.model,
                "arch": res.arch,
                "device": res.device,
                "history": res.history,
                "data": data,  # evaluate on what it trained on, even if the choice changes
            }
            st.session_state[RUN_KEY] = run
            status.info(f"Training {res.arch} on {res.device}...")
            continue
        bar.progress(ev.fraction, text=f"{100 * ev.fraction:.0f}% of {ev.images_total:,} images")
        status.info(_status_text(ev))
        if ev.kind in ("progress", "epoch"):
            _draw_curves(run["history"], loss_box, acc_box)
        if ev.kind == "end":
            _finish(run, data, ev.stopped)
            live.empty()


def _init_defaults() -> None:
    """Defaults go into session state once, so widgets never get both a value and a state."""
    ss = st.session_state
    if "training_folder" not in ss:
        default = shared_subset_dir()
        ss["training_folder"] = str(default) if default else ""
    ss.setdefault("training_cache", str(default_cache_dir()))
    ss.setdefault("training_preset", "fast")
    ss.setdefault("training_device", "auto")
    ss.setdefault("training_time_limit", 0.0)
    for name, p in PRESETS.items():
        ss.setdefault(f"training_epochs_{name}", p.epochs)
        ss.setdefault(f"training_batch_{name}", p.batch_size)
        ss.setdefault(f"training_lr_{name}", p.lr)


def _settings_form() -> dict:
    _init_defaults()
    c1, c2 = st.columns([3, 2])
    with c1:
        source = st.radio("Data", [FOLDER, CIFAR], key="training_source")
        if source == FOLDER:
            folder = st.text_input(
                "Folder",
                key="training_folder",
                help="ImageFolder layout: train/<class>/*.jpg and test/<class>/*.jpg",
            )
            cache_dir = ""
        else:
            folder = ""
            cache_dir = st.text_input("Cache folder", key="training_cache")
            st.caption(
                "About 170 MB is downloaded once with a progress bar; later runs read the cache."
            )
    with c2:
        devices = available_devices()
        if st.session_state["training_device"] not in devices:
            st.session_state["training_device"] = "auto"
        device_choice = st.selectbox("Device", devices, key="training_device")
        off = [f"{d}: {why}" for d in ("cuda", "mps") if (why := device_unavailable_reason(d))]
        if off:
            st.caption("Not on this host: " + "; ".join(off) + ".")
        preset = st.selectbox("Preset", list(PRESETS), key="training_preset")
        st.caption(PRESETS[preset].description)
    c3, c4, c5, c6 = st.columns(4)
    epochs = c3.number_input("Epochs", 1, 200, key=f"training_epochs_{preset}")
    batch_size = c4.number_input("Batch size", 1, 8192, key=f"training_batch_{preset}")
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
    }


def _show_result(result: dict) -> None:
    st.subheader("Results")
    if result["stopped"]:
        st.warning(
            f"Training ended early ({result['stopped']}) after {result['epochs_done']:.2f} epochs; "
            "these are the results of what it had learned."
        )
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Test accuracy", f"{100 * result['accuracy']:.1f}%")
    m2.metric("Training time", f"{result['seconds']:.1f} s")
    m3.metric("Images/s", f"{result['images_per_s']:,.0f}")
    m4.metric("Device", result["device"])
    st.caption(f"{result['preset']} preset, {result['arch']} network, {result['data']}.")
    loss, acc = _curves(result["history"])
    if not loss.empty:
        left, right = st.columns(2)
        left.line_chart(loss, x_label="images seen", y_label="loss", height=220)
        right.line_chart(acc, x_label="images seen", y_label="accuracy", height=220)
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Per-class accuracy** (as the tutorial prints it)")
        st.code("\n".join(result["report"]), language=None)
    with right:
        st.markdown("**Confusion matrix**")
        st.image(result["confusion_png"])
    st.markdown("**Test images: predicted and true labels**")
    st.image(result["grid_png"])
    st.download_button(
        "Download weights (state_dict)",
        data=result["weights"],
        file_name=f"gradviz-{result['arch']}.pt",
        mime="application/octet-stream",
        key="training_download",
    )


def _show_comparison() -> None:
    compare = st.session_state.get(COMPARE_KEY, {})
    by_preset: dict[str, list[dict]] = {}
    for (preset, _device), row in compare.items():
        by_preset.setdefault(preset, []).append(row)
    shown = False
    for preset, rows in by_preset.items():
        if len(rows) > 1:
            st.markdown(f"**CPU vs GPU, {preset} preset** (last run on each device)")
            st.dataframe(pd.DataFrame(rows), hide_index=True)
            shown = True
    if not shown and compare:
        why = device_unavailable_reason("cuda")
        st.caption(
            "Run the same preset on another device to compare seconds, images/s and accuracy."
            + (f" CUDA is off here: {why}." if why else "")
        )


def _evaluate_upload(data: Dataset | None) -> None:
    st.subheader("Evaluate uploaded weights")
    upload = st.file_uploader(
        "A state_dict saved by this page or the CLI (.pt)",
        type=["pt", "pth", "bin"],
        key="training_upload",
    )
    if upload is None:
        return
    if data is None:
        st.info("Choose data above first; the weights are evaluated on its test images.")
        return
    try:
        arch, model = load_weights(upload.getvalue(), num_classes=len(data.classes))
    except CheckpointError as exc:
        st.error(f"Weights refused: {exc}")
        return
    classes = display_classes(data.classes)
    ev = evaluate(model, data.test, arch, "cpu", classes)
    st.success(
        f"{arch} weights: {100 * ev.accuracy:.1f}% on {len(data.test):,} test images ({data.source})."
    )
    left, right = st.columns([2, 3])
    left.code("\n".join(ev.report_lines()), language=None)
    right.image(confusion_png(ev.confusion, classes))


def page() -> None:
    st.title("CIFAR-10 training")
    st.markdown(
        "The PyTorch tutorial trains a small CNN on CIFAR-10 with batches of 4 and a `.item()` "
        "every step. Train it here on a real device and watch why it is slow, then run the "
        "**fast** preset: the data lives on the device as tensors, batches are large, augmentation "
        "runs on whole batches, and the host reads the loss only when the chart updates."
    )
    if missing := torchvision_missing():
        st.warning(missing, icon=":material/info:")
    settings = _settings_form()
    data = None
    try:
        data = _load_data(settings["source"], settings["folder"], settings["cache_dir"])
        st.caption(data.describe())
    except DataError as exc:
        st.error(str(exc))
    except Exception as exc:  # last resort: keep the page up
        show_unexpected(exc, "loading the data")

    interrupted = st.session_state.get(RUN_KEY)
    if interrupted and data is not None and interrupted.get("model") is not None:
        reason = (
            "stopped by you"
            if st.session_state.get("training_stop")
            else "interrupted by a change on the page"
        )
        try:
            _finish(interrupted, data, reason)
        except Exception as exc:
            st.session_state.pop(RUN_KEY, None)
            show_unexpected(exc, "evaluating the stopped run")

    start = st.button(
        "Train",
        type="primary",
        icon=":material/model_training:",
        disabled=data is None,
        key="training_start",
    )
    if start and data is not None:
        try:
            _run_training(data, settings)
        except (DeviceError, ValueError) as exc:
            st.error(str(exc))
        except Exception as exc:
            show_unexpected(exc, "training")
    # Drawn from session state, so the results look the same on every later rerun.
    result = st.session_state.get(RESULT_KEY)
    if result:
        _show_result(result)
    _show_comparison()
    try:
        _evaluate_upload(data)
    except Exception as exc:  # last resort: keep the page up
        show_unexpected(exc, "evaluating the uploaded weights")
