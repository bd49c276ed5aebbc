"""The Training page's run: started in line for a training slot, followed live across script
runs (gradviz.services.following), stopped by the page's Stop or Streamlit's, and its result
kept with the stop reason in the page's words.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NoReturn

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from gradviz.services.following import Followed
from gradviz.services.jobs import error_kind, start_in_line
from gradviz.training.events import DataRead, Evaluating, Progress, Started, TrainingSummary
from gradviz.training.settings import (
    STOP_REASONS,
    effective_time_limit,
    preset_unavailable_reason,
    training_limits,
)
from gradviz.training.sources import DataError
from gradviz.ui.common import show_unexpected, tab_open
from gradviz.ui.training import runs
from gradviz.ui.training.curves import curve_rows, draw_curves
from gradviz.ui.training.data import Source
from gradviz.util.busy import Busy
from gradviz.util.format import fmt_eta
from gradviz.util.mdtext import message
from gradviz.util.resources import available_cpus

RUN_KEY = "training_run"  # the job in progress: {"job": a Followed, "settings", "following"}
RESULT_KEY = "training_result"  # the last finished run, drawn on every rerun
FAILED_KEY = "training_failed"  # why the last run failed (callables drawing it), kept alike
QUEUE_S = 30.0  # how long a Train click waits for another visitor's run to end
ABANDON_S = 60.0  # a run nobody follows for this long (a closed tab) is stopped
ADOPT_S = 3.0  # a run no script run follows this long after the script stopped is stopped
POLL_S = 0.5  # while a run streams, the page redraws (where Streamlit can stop it) this often
PAGE_STOPPED = "the page was stopped (Streamlit's Stop, top right), so the run was stopped"


def _status_text(ev: Progress) -> str:
    parts = [
        f"epoch {ev.epoch}/{ev.epochs}",
        f"step {ev.step:,}/{ev.steps_total:,}",
        f"{ev.images_per_s:,.0f} images/s",
        f"ETA {fmt_eta(ev.eta_s)}",
    ]
    if ev.loss is not None:
        parts.append(f"loss {ev.loss:.3f}")
    if ev.accuracy is not None:
        parts.append(f"train accuracy {100 * ev.accuracy:.1f}%")
    return " · ".join(parts)


def keep_result(result: TrainingSummary) -> None:
    st.session_state[RESULT_KEY] = result
    runs.keep(result, *curve_rows(result.history))


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
    st.session_state.pop(FAILED_KEY, None)
    st.session_state[RUN_KEY] = {"job": Followed(job), "settings": run_settings}


REDRAW_S = 1.0  # after Streamlit's Stop, the page looks this often whether to draw the end


def unseen_end(run: dict | None) -> bool:
    """Whether `run` ended, or was stopped, with no script run following it: after
    Streamlit's Stop the page froze on its last drawing (an ETA), and only a new script run
    can draw how the run ended."""
    if not run or not isinstance(run.get("job"), Followed):
        return False
    followed = run["job"]
    return followed.page_stopped or followed.job.finished


@st.fragment(run_every=REDRAW_S)
def _redraw_when_ended() -> None:
    """Drawn beside a run that is followed live. Streamlit's own Stop (top right) ends the
    script but not this fragment's timer, which the browser keeps: once the run has been
    stopped (ADOPT_S later) or has ended with nobody following it, the page runs again and
    shows the results so far and why the run ended, with no click needed. Runs of this
    fragment while the script still follows the run wait for it to end, and then find the
    run taken care of. The timer ends with the page run that draws how the run ended (see
    _ended): a page run without a live run registers no such fragment, and the browser drops
    its timer; a tick with no run left to follow starts that page run."""
    run = st.session_state.get(RUN_KEY)
    if run and run.get("following"):  # drawn by the script run that follows the run
        return
    if unseen_end(run) or RUN_KEY not in st.session_state:
        st.rerun()


def _follow(run: dict) -> None:
    """Draw the job's progress live until it ends, then keep its results (or say why not).

    A click on any widget (the page's Stop too) or Streamlit's own Stop (top right), or the
    end of the session, stops the script at its next element (StopException); a click starts
    the next script run at once, which follows the run again (adopts it). When none does
    (Streamlit's Stop, a session gone), the run is asked to stop ADOPT_S later (it still sends
    what it learned) and the page's next run, which _redraw_when_ended starts without a
    click, shows that result and why it ended. A closed tab ends it (services.following)."""
    run["following"] = True
    try:
        _follow_live(run)
    except Exception as exc:  # noqa: BLE001 - said on the page, which stays up
        _ended([lambda exc=exc: show_unexpected(exc, "following the training run")])
    finally:  # the end, an error, or a stop of the script (StopException): not followed now
        # (in the run dict: a stopped script run may no longer assign to session state)
        run["following"] = False


def _follow_live(run: dict) -> None:
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
        _redraw_when_ended()
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
    if job.status == "done":
        keep_result(_explain_stop(job.result, job.abandoned, followed.page_stopped))
        _ended()
    if error_kind(job) in ("data", "device", "value"):
        text = message(job.message)
    else:
        text = message(job.describe_failure("training")) + " Nothing else was affected."
    _ended([lambda: st.error(text)])


def _ended(failure: list | None = None) -> NoReturn:
    """The followed run ended (its results kept, or `failure`: what draws why it failed): the
    page runs again at once and draws that from session state, as every later run does. That
    page run follows no run, so it registers no _redraw_when_ended and the browser drops the
    fragment's timer: nothing ticks after a run ends, however it ended."""
    st.session_state.pop(RUN_KEY, None)
    if failure:
        st.session_state[FAILED_KEY] = failure
    st.rerun()


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
            draw_curves(history, *boxes)
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


def current_run() -> dict | None:
    """The run this session started and still follows (asked to stop if Stop was pressed)."""
    run = st.session_state.get(RUN_KEY)
    if run and not isinstance(run.get("job"), Followed):
        st.session_state.pop(RUN_KEY, None)  # not a run this page started: forget it
        run = None
    if run and st.session_state.get("training_stop"):
        run["job"].job.stop()
    return run


def retire(run: dict) -> None:
    """A Train click while this session still keeps an earlier run (running on unseen after
    Streamlit's Stop, or finished since): that run ends here and is never shown as the new
    one; a result it finished with goes to the table of this session's runs only."""
    st.session_state.pop(RUN_KEY, None)
    followed = run["job"]
    followed.retire()  # its CPU free before the new run's images/s are measured
    job = followed.job
    if job.status == "done":
        keep_result(_explain_stop(job.result, job.abandoned, followed.page_stopped))
        st.session_state.pop(RESULT_KEY, None)


def run_area(run: dict | None, start: bool, source: Source | None, settings: dict) -> list:
    """Follow the running job, or start one on a Train click; what went wrong, as callables
    that draw it (drawn again with the results)."""
    messages: list = []
    if run:
        _follow(run)
    elif start and source is not None:
        st.session_state.pop(FAILED_KEY, None)  # a new run: the last one's failure goes
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
