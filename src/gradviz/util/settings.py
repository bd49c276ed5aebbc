"""Every GRADVIZ_* environment variable in one table (SETTINGS: name, default, parser, one
line of doc), and the limits that differ on a public host in one profile table (LOCAL,
PUBLIC). The only module that reads a GRADVIZ_* variable.

Values are read at each call, never cached: a test's monkeypatch.setenv, or settle_mode's
choice of mode, counts at once. A value its parser refuses raises SettingError, whose message
names the variable, what it holds and what it should hold; problems() lists them all, for a
check at start-up. An empty value is the same as an unset one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MIB = 1024 * 1024


class SettingError(ValueError):
    """A GRADVIZ_* variable set to a value its parser refuses (the message names it)."""


# ------------------------------------------------------------------ the public/local profile


@dataclass(frozen=True)
class Profile:
    """The limits that differ between a local host and a public one (GRADVIZ_PUBLIC=1)."""

    upload_bytes: int  # largest weights file the training page accepts (Streamlit MiB)
    uploads_held_bytes: int  # uploaded bytes all sessions together may hold in the server
    max_batch: int  # largest training batch a page run may ask for
    training_memory: int  # per training worker, beyond its own
    timing_memory: int | None  # what a timing worker may grow by (None: free RAM rules)
    worker_memory: int  # what one program may use beyond a warm worker
    result_memory: int  # what the pool unpickles of one result at most (server side)
    decoded_bytes: int  # what a result may take unpickled, as the worker shrinks it first
    visitor_seconds: float | None  # worker-seconds per visitor per minute (None: no budget)
    results_bytes: int  # the server's cache of pickled program results
    session_results_bytes: int  # every session's latest result, unpickled
    drawings_bytes: int  # the server's cache of drawings
    gif_memory: int  # the walk-through GIF's worker, beyond its own
    slide_steps: int  # backward steps the walk-through makes frames for
    proxy_hops: int  # proxies trusted to append to X-Forwarded-For
    heavy_share_slot: bool  # trainings and timings share one slot, server-wide


LOCAL = Profile(
    upload_bytes=32 * MIB,  # = training.settings.MAX_CHECKPOINT_BYTES, what a worker reads
    uploads_held_bytes=128 * MIB,
    max_batch=8192,
    training_memory=1_500_000_000,
    timing_memory=None,
    worker_memory=900_000_000,  # = workers.pool.SandboxLimits.memory_bytes
    result_memory=48_000_000,  # = workers.pool.SandboxLimits.decoded_bytes
    decoded_bytes=32_000_000,
    visitor_seconds=None,
    results_bytes=64 * MIB,
    session_results_bytes=256 * MIB,
    drawings_bytes=128 * MIB,
    gif_memory=512 * MIB,
    slide_steps=60,
    proxy_hops=0,
    heavy_share_slot=False,
)
# A public host shares a small container (Community Cloud: 690 MB) among all visitors; these
# keep the server, the forkserver, a warm worker and one job under it (docs/BENCHMARKS.md).
PUBLIC = Profile(
    upload_bytes=20 * MIB,
    uploads_held_bytes=40 * MIB,  # two uploads at once
    max_batch=128,  # activations grow with the batch
    training_memory=400_000_000,
    timing_memory=200_000_000,  # glibc keeps freed heap: about 3.2x a timing's tensors
    worker_memory=300_000_000,  # above the public program limits' 200 MB of tensors
    result_memory=16_000_000,  # above decoded_bytes, which shrinks results first
    decoded_bytes=12_000_000,  # every session may hold one
    visitor_seconds=40.0,  # two thirds of one worker: others find room beside the busiest
    results_bytes=24 * MIB,
    session_results_bytes=48 * MIB,
    drawings_bytes=32 * MIB,
    gif_memory=256 * MIB,
    slide_steps=25,
    proxy_hops=1,  # Community Cloud's own proxy
    heavy_share_slot=True,  # one heavy job at a time keeps the worst case in memory
)


# ------------------------------------------------------------------------------- parsers

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class Parser:
    """How one kind of value is read: `read` raises ValueError on a bad text; `expects` says
    what a good one is, for the error and for README."""

    read: Callable[[str], object]
    expects: str


def _flag(text: str) -> bool:
    word = text.strip().lower()
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    raise ValueError(word)


def _whole(minimum: int) -> Callable[[str], int]:
    def read(text: str) -> int:
        value = int(text.strip())
        if value < minimum:
            raise ValueError(text)
        return value

    return read


def _number(minimum: float, *, strict: bool) -> Callable[[str], float]:
    def read(text: str) -> float:
        value = float(text.strip())
        if not math.isfinite(value) or value < minimum or (strict and value == minimum):
            raise ValueError(text)
        return value

    return read


def _bytes(text: str) -> int:
    value = int(_number(0.0, strict=True)(text))
    if value < 1:
        raise ValueError(text)
    return value


def _items(separator: str, *, strip: bool) -> Callable[[str], tuple[str, ...]]:
    def read(text: str) -> tuple[str, ...]:
        parts = text.split(separator)
        return tuple(p.strip() if strip else p for p in parts if p.strip())

    return read


FLAG = Parser(_flag, "on or off (1, true, yes, on / 0, false, no, off)")
COUNT = Parser(_whole(1), "a whole number, at least 1")
HOPS = Parser(_whole(0), "a whole number, at least 0")
SECONDS = Parser(_number(0.0, strict=True), "a number of seconds above 0")
BUDGET = Parser(_number(0.0, strict=False), "a number of seconds, 0 or more (0: none)")
BYTES = Parser(_bytes, "a number of bytes above 0 (5e8 is 500 MB)")
PATH = Parser(str, "a folder")
PATHS = Parser(_items(os.pathsep, strip=False), "folders separated by the OS path separator (:)")
NAMES = Parser(_items(",", strip=True), "names separated by commas")


# ------------------------------------------------------------------------------ the table


@dataclass(frozen=True)
class ByMode:
    """A default that is the current profile's field (LOCAL or PUBLIC)."""

    field: str


@dataclass(frozen=True)
class Setting:
    """One GRADVIZ_* variable: its default (a value, or ByMode), parser and one line of doc."""

    name: str
    default: object
    parser: Parser
    doc: str


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting(
            "GRADVIZ_PUBLIC",
            None,
            FLAG,
            "Public mode: visitors type no paths, smaller limits (unset: public unless the "
            "server listens on loopback only).",
        ),
        Setting(
            "GRADVIZ_TRUST_NETWORK",
            False,
            FLAG,
            "With GRADVIZ_PUBLIC=0, local mode even on a server other machines can reach.",
        ),
        Setting(
            "GRADVIZ_ALLOWED_HOSTS",
            (),
            NAMES,
            "Local mode: Host names besides localhost a page may be opened under.",
        ),
        Setting(
            "GRADVIZ_DATA_ROOTS",
            (),
            PATHS,
            "Public mode: image folders (with train/ and test/, or directly inside one) "
            "visitors may train on.",
        ),
        Setting(
            "GRADVIZ_CACHE",
            "",
            PATH,
            "Where CIFAR-10 is downloaded to, in its cifar10 folder (unset: ~/.cache/gradviz).",
        ),
        Setting(
            "GRADVIZ_SANDBOX",
            True,
            FLAG,
            "off: programs and jobs run in the server's own process, without limits.",
        ),
        Setting(
            "GRADVIZ_LANDING",
            True,
            FLAG,
            "off: the first page's program runs in a worker instead of showing its stored result.",
        ),
        Setting("GRADVIZ_WORKERS", 1, COUNT, "Warm workers that run visitors' programs."),
        Setting("GRADVIZ_RUN_SECONDS", 20.0, SECONDS, "Wall clock of one program run."),
        Setting(
            "GRADVIZ_WORKER_MEMORY",
            ByMode("worker_memory"),
            BYTES,
            "Memory one program run may use beyond a warm worker.",
        ),
        Setting(
            "GRADVIZ_VISITOR_SECONDS",
            PUBLIC.visitor_seconds,
            BUDGET,
            "Public mode: worker-seconds each visitor may use per minute.",
        ),
        Setting(
            "GRADVIZ_PROXY_HOPS",
            ByMode("proxy_hops"),
            HOPS,
            "Proxies in front of the server that append to X-Forwarded-For.",
        ),
        Setting("GRADVIZ_TRAINING_JOBS", 1, COUNT, "Trainings at once, server-wide."),
        Setting("GRADVIZ_SPEED_JOBS", 1, COUNT, "Timings at once, server-wide."),
        Setting(
            "GRADVIZ_HEAVY_JOBS",
            1,
            COUNT,
            "Public mode: trainings and timings at once, together, server-wide.",
        ),
        Setting("GRADVIZ_SLIDES_JOBS", 1, COUNT, "Walk-through GIFs made at once, server-wide."),
        Setting(
            "GRADVIZ_WEIGHTS_JOBS",
            1,
            COUNT,
            "Evaluations of uploaded weights at once, server-wide.",
        ),
        Setting("GRADVIZ_TRAINING_SECONDS", 600.0, SECONDS, "The longest training run."),
        Setting(
            "GRADVIZ_TRAINING_MEMORY",
            ByMode("training_memory"),
            BYTES,
            "Memory per training worker beyond its own (lowered to 80% of what is free).",
        ),
        Setting(
            "GRADVIZ_PUBLIC_MAX_BATCH",
            PUBLIC.max_batch,
            COUNT,
            f"Public mode: the largest training batch (locally {LOCAL.max_batch}).",
        ),
        Setting("GRADVIZ_SPEED_SECONDS", 600.0, SECONDS, "Wall clock of one timing job."),
        Setting(
            "GRADVIZ_PUBLIC_TIMING_MEMORY",
            PUBLIC.timing_memory,
            BYTES,
            "Public mode: what one timing worker may grow by; larger sizes are refused.",
        ),
    )
}


# ----------------------------------------------------------------------------- reading


def public_host(env: Mapping[str, str] | None = None) -> bool:
    """Whether this is a public host: GRADVIZ_PUBLIC=1 (settle_mode sets it at start)."""
    return get("GRADVIZ_PUBLIC", env) is True


def profile(env: Mapping[str, str] | None = None) -> Profile:
    """The limits of this host: PUBLIC on a public host, LOCAL elsewhere."""
    return PUBLIC if public_host(env) else LOCAL


def default(name: str, env: Mapping[str, str] | None = None) -> object:
    """What `name` is when unset, on this host."""
    value = SETTINGS[name].default
    return getattr(profile(env), value.field) if isinstance(value, ByMode) else value


def get(name: str, env: Mapping[str, str] | None = None) -> object:
    """The value of setting `name` (KeyError if it is not in SETTINGS), read now from `env`
    (os.environ when None); its default when unset or empty. SettingError when set wrong."""
    setting = SETTINGS[name]
    text = (os.environ if env is None else env).get(name, "")
    if not text.strip():
        return default(name, env)
    try:
        return setting.parser.read(text)
    except ValueError:
        raise SettingError(
            f"{name}={text!r} is not valid: it should be {setting.parser.expects} "
            f"({setting.doc.rstrip('.')})"
        ) from None


def flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    value = get(name, env)
    if not isinstance(value, bool):
        raise TypeError(f"{name} is not an on/off setting")
    return value


def integer(name: str, env: Mapping[str, str] | None = None) -> int:
    value = get(name, env)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} is not a whole-number setting")
    return value


def number(name: str, env: Mapping[str, str] | None = None) -> float:
    value = get(name, env)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"{name} is not a number setting")
    return float(value)


def text(name: str, env: Mapping[str, str] | None = None) -> str:
    value = get(name, env)
    if not isinstance(value, str):
        raise TypeError(f"{name} is not a text setting")
    return value


def items(name: str, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    value = get(name, env)
    if not isinstance(value, tuple):
        raise TypeError(f"{name} is not a list setting")
    return value


def problems(env: Mapping[str, str] | None = None) -> list[str]:
    """Every setting that is set to a value its parser refuses, as SettingError's message."""
    out = []
    for name in SETTINGS:
        try:
            get(name, env)
        except SettingError as exc:  # a wrong GRADVIZ_PUBLIC spoils every ByMode default too
            if str(exc) not in out:
                out.append(str(exc))
    return out


# ----------------------------------------------------------------------------- for README


def _shown(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return "none" if not value else ", ".join(value)
    if isinstance(value, float) and value.is_integer():
        return f"{int(value)}"
    if isinstance(value, int) and value >= 10_000:
        return f"{value:,}"
    return str(value) if value != "" else "unset"


def table() -> str:
    """SETTINGS as a Markdown table (README's list of settings, scripts/architecture.py)."""
    rows = ["| variable | default (local / public) | value | what it sets |", "|---|---|---|---|"]
    for s in SETTINGS.values():
        if isinstance(s.default, ByMode):
            local, public_ = (getattr(p, s.default.field) for p in (LOCAL, PUBLIC))
            shown = f"{_shown(local)} / {_shown(public_)}"
        else:
            shown = _shown(s.default)
        rows.append(f"| `{s.name}` | {shown} | {s.parser.expects} | {s.doc} |")
    return "\n".join(rows)
