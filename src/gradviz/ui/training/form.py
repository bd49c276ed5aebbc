"""The Training page's settings: data, device, preset, processes, epochs, batch size, learning
rate and time limit, with defaults put into session state once.
"""

from __future__ import annotations

import streamlit as st

from gradviz.services import host
from gradviz.training.settings import PRESETS, TrainingDevices, max_batch_size
from gradviz.training.sources import default_cache_dir, public_folder_choices, shared_subset_dir
from gradviz.ui import training_ddp
from gradviz.ui.training.data import CIFAR, FOLDER, NO_PUBLIC_FOLDER
from gradviz.util import settings
from gradviz.util.mdtext import escape


def training_devices() -> tuple[TrainingDevices, str | None]:
    """The devices this host can train on, from host.facts() (asked of a worker once, so the
    server never imports torch); CPU only, with the reason, when that fails."""
    try:
        return TrainingDevices.from_facts(host.facts()), None
    except Exception as exc:  # a worker that cannot start: training could not either
        return TrainingDevices(cuda=False, mps=False), f"{type(exc).__name__}: {exc}"


def _init_defaults() -> None:
    """Defaults go into session state once, so widgets never get both a value and a state."""
    ss = st.session_state
    if "training_folder" not in ss:
        default = shared_subset_dir()
        ss["training_folder"] = str(default) if default else ""
    if not settings.public_host():
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
    if not settings.public_host():
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
    if not settings.public_host():
        return st.text_input("Cache folder", key="training_cache")
    st.markdown(f"Cache folder: `{default_cache_dir()}`")
    st.caption(
        "Set by this server's operator with GRADVIZ_CACHE (the cache is $GRADVIZ_CACHE/cifar10, "
        "default ~/.cache/gradviz/cifar10); visitors cannot change it."
    )
    return ""


def settings_form() -> dict:
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
        found, problem = training_devices()
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
        if max_batch == settings.LOCAL.max_batch
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
