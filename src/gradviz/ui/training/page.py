"""CIFAR-10 training page: the tutorial's network live on CPU or GPU, and the fast preset.

Thin: all work is in gradviz.training, and none of it runs in the server. Its parts: `data`
(the images chosen), `form` (the settings), `live` (the run followed), `curves`, `result`,
`runs` (this session's runs side by side), `weights` and `uploads` (weights uploaded). The page
checks the folder and counts its files; training runs in a worker process started for it
(gradviz.services.jobs, gradviz.training.jobs) that reads the images itself, streams progress
events back and exits when done, so its memory returns to the system. The script follows the
job, redrawing a few st.empty placeholders per event. Stop (or any other click) makes Streamlit
rerun the page; the rerun finds the job in session state, asks it to stop if Stop was pressed
(it ends after the current step, evaluates what it learned and sends the results), and follows
it again. Uploaded weights are evaluated in a worker too. At most GRADVIZ_TRAINING_JOBS
trainings run at once on the server (default 1); others wait in line for a while, then are told
the server is busy.

The server never imports torch or numpy for this page (torch alone is about 190 MB of its
memory): presets, caps and limits come from gradviz.training.settings, the folder checks and
the CIFAR-10 download from gradviz.training.sources, the devices from
gradviz.services.host.facts() (asked of a worker), and the workers send back only plain data:
the frozen dataclasses of gradviz.training.events (numbers, text, PNG bytes), read here by
field.
"""

from __future__ import annotations

import streamlit as st

from gradviz.training.settings import max_training_seconds
from gradviz.training.sources import torchvision_missing
from gradviz.ui.common import show_unexpected
from gradviz.ui.training import runs
from gradviz.ui.training.data import checked_source
from gradviz.ui.training.form import settings_form, training_devices
from gradviz.ui.training.live import FAILED_KEY, RESULT_KEY, current_run, retire, run_area
from gradviz.ui.training.result import show_result
from gradviz.ui.training.weights import evaluate_upload
from gradviz.util.busy import Busy
from gradviz.util.mdtext import escape, message
from gradviz.util.settings import public_host


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
    if public_host():
        st.caption(
            "Public server: data comes only from the folders and the CIFAR-10 cache its "
            "operator set up. Training runs in a separate worker process, at most "
            f"{max_training_seconds():.0f} s."
        )


def page() -> None:
    _intro()
    settings = settings_form()
    source = checked_source(settings)
    run = current_run()
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
        retire(run)
        run = None
    area = st.empty()
    messages: list = []  # drawn again with the results, which replace what the slot held
    if run or (start and source is not None):
        with area.container():
            messages = run_area(run, start, source, settings)
    # Drawn from session state, so the results (or why the run failed) look the same on every
    # later rerun: the page runs again as soon as a followed run ends (see live.py).
    result = st.session_state.get(RESULT_KEY)
    failure = st.session_state.get(FAILED_KEY, [])
    if result or messages or failure:
        with area.container():
            for show in [*messages, *failure]:
                show()
            if result:
                show_result(result)
    runs.section(training_devices()[0].unavailable_reason("cuda"))
    try:
        evaluate_upload(source)
    except Busy as exc:
        st.error(f"Could not evaluate the weights now: {escape(exc)}")
    except Exception as exc:  # last resort: keep the page up
        show_unexpected(exc, "evaluating the uploaded weights")
