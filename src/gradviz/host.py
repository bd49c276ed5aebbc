"""What this host's PyTorch offers, known to the server without importing torch.

The Streamlit server never imports torch (its import alone is about 190 MB of the server's
proportional set size with CPU-only torch; docs/BENCHMARKS.md): programs, timings and
training run in worker processes, and what the pages need to know about the host (torch's
version, the devices, whether CUDA is simulated) is asked of a worker once and kept.

- `facts()`: a HostFacts, gathered by `gather()` in a job worker on first use and cached
  for the life of the process (with GRADVIZ_SANDBOX=off, gathered in this process).
- `ask(kind, args)`: run one small job (placement, allocator figures) in a worker and
  return its result.
- Plain helpers every page uses: DeviceInfo, device_label, trace_memory, public_mode.

No Streamlit here, and torch only inside the functions that run in a worker.
"""

from __future__ import annotations

import ipaddress
import math
import os
import platform
import threading
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

SIMULATED_CUDA_COUNT = 2  # cuda:0 and cuda:1, so the cuda:0-vs-cuda:1 lesson works too
SIMULATED_SUFFIX = " (simulated)"
FACTS_SECONDS = 120.0  # first use may wait for the forkserver's torch import
# Room for the worker's memory growth while it asks torch. On a CPU-only host these jobs grow
# by a few MB; on a GPU host the first CUDA call creates a CUDA context in the worker, which
# holds a few hundred MB of host memory: the cap must not stop that. The worker exits at once.
FACTS_MEMORY = 1024 * 1024 * 1024


@dataclass(frozen=True)
class DeviceInfo:
    key: str  # "cpu", "cuda:0", "mps"
    kind: str  # cpu | cuda | mps
    name: str
    simulated: bool = False
    total_memory: int | None = None  # bytes

    @property
    def label(self) -> str:
        return self.key + (SIMULATED_SUFFIX if self.simulated else "")


@dataclass(frozen=True)
class HostFacts:
    """What torch reports on this host, as plain data."""

    torch_version: str
    cuda_available: bool
    cuda_count: int
    mps_available: bool
    devices: tuple[DeviceInfo, ...] = field(default_factory=tuple)
    cuda_build: str | None = None  # torch.version.cuda: the CUDA this torch was built for

    @property
    def simulated(self) -> bool:
        """True where PyTorch has no CUDA device: lessons then run on simulated CUDA."""
        return not self.cuda_available

    @property
    def gpu_name(self) -> str | None:
        return next((d.name for d in self.devices if d.kind == "cuda" and not d.simulated), None)

    def device_choices(self, simulate: bool | None = None) -> list[str]:
        """Devices a program's tensors can be moved to: cpu and the CUDA devices (real or
        simulated), and mps where present on a real-device host."""
        simulate = self.simulated if simulate is None else simulate
        if simulate:
            return ["cpu"] + [f"cuda:{i}" for i in range(SIMULATED_CUDA_COUNT)]
        out = ["cpu"] + [f"cuda:{i}" for i in range(self.cuda_count)]
        if self.mps_available:
            out.append("mps")
        return out


def device_label(device: str, simulated: bool) -> str:
    return device + (SIMULATED_SUFFIX if simulated and device != "cpu" else "")


def public_mode() -> bool:
    """GRADVIZ_PUBLIC=1: a public host (Community Cloud): smaller caps, fewer data roots."""
    return _flag("GRADVIZ_PUBLIC") is True


def _flag(name: str, env: Mapping[str, str] | None = None) -> bool | None:
    """An on/off environment variable: True, False, or None when unset or unreadable."""
    value = (os.environ if env is None else env).get(name, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return None


# Local mode (visitors may type folders, train on any folder, long jobs) is for one person on
# their own machine: the server must listen on loopback only. Names a browser on this machine
# uses for it; GRADVIZ_ALLOWED_HOSTS adds more (comma-separated) for a trusted proxy.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
TRUST_NETWORK = "GRADVIZ_TRUST_NETWORK"  # 1: local mode even when reachable from the network


def is_loopback(address: str | None) -> bool:
    """Whether a listening address or Host name reaches this machine only."""
    if not address:
        return False  # unset: Streamlit listens on every interface
    name = address.strip().strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def settle_mode(address: str | None, env: MutableMapping[str, str] | None = None) -> str:
    """Decide public or local mode for a server listening on `address`, and record it in
    GRADVIZ_PUBLIC (which worker processes inherit). Returns why, in a few words.

    GRADVIZ_PUBLIC=1 is always public. Otherwise local mode needs a loopback address, or
    GRADVIZ_PUBLIC=0 together with GRADVIZ_TRUST_NETWORK=1: a server that others can reach
    (Community Cloud, `streamlit run` on a shared machine) is public by default, so a
    deployment that forgets GRADVIZ_PUBLIC does not hand the internet local mode."""
    env = os.environ if env is None else env
    asked = _flag("GRADVIZ_PUBLIC", env)
    if asked is True:
        return "GRADVIZ_PUBLIC=1"
    if is_loopback(address):
        env["GRADVIZ_PUBLIC"] = "0"
        return f"listening on {address} only"
    if asked is False and _flag(TRUST_NETWORK, env) is True:
        return f"GRADVIZ_PUBLIC=0 and {TRUST_NETWORK}=1"
    env["GRADVIZ_PUBLIC"] = "1"
    return "reachable from other machines"


def host_allowed(host_header: str | None, env: Mapping[str, str] | None = None) -> bool:
    """Whether a request's Host header names this machine as a local page may be opened.

    A page from another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own
    name as Host: local mode answers only loopback names and GRADVIZ_ALLOWED_HOSTS."""
    if not host_header:
        return False
    name = host_header.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    extra = (os.environ if env is None else env).get("GRADVIZ_ALLOWED_HOSTS", "")
    allowed = {h.strip().lower() for h in extra.split(",") if h.strip()}
    return is_loopback(name) or name in allowed


DTYPE_BYTES = {
    "float64": 8, "int64": 8, "complex64": 8, "float32": 4, "int32": 4,
    "float16": 2, "bfloat16": 2, "int16": 2, "int8": 1, "uint8": 1, "bool": 1,
}  # fmt: skip


def trace_memory(tensors, simulated: bool) -> list[dict]:
    """Bytes of the tensors a program named, per device (values and gradients)."""
    per: dict[str, dict] = {}
    for t in tensors:
        n = 1
        for s in t.shape:
            n *= s
        nbytes = n * DTYPE_BYTES.get(t.dtype, 4)
        row = per.setdefault(
            t.device,
            {
                "device": device_label(t.device, simulated),
                "tensors": 0,
                "bytes": 0,
                "grad_bytes": 0,
            },
        )
        row["tensors"] += 1
        row["bytes"] += nbytes
        if t.grad_preview is not None:
            row["grad_bytes"] += nbytes
    return list(per.values())


# ---------------------------------------------------------------- CPUs and memory


def available_cpus() -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup v2 CPU quota."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        count = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            count = min(count, max(1, math.floor(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, count)


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_available() -> int | None:
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit == "max":
            return None
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        return max(0, int(limit) - used)
    except (OSError, ValueError):
        return None


def cpu_memory_available() -> int | None:
    """Bytes of host memory free now: the smaller of MemAvailable and the cgroup's headroom."""
    known = [b for b in (_meminfo_available(), _cgroup_available()) if b is not None]
    return min(known) if known else None


# ---------------------------------------------------------------- in a worker (torch)


def gather() -> HostFacts:
    """Ask torch, in this process, what the host offers."""
    import torch

    from gradviz.devices import cuda_available, mps_available

    cuda, mps = cuda_available(), mps_available()
    out = [DeviceInfo("cpu", "cpu", platform.processor() or platform.machine() or "CPU")]
    count = torch.cuda.device_count() if cuda else 0
    if cuda:
        for i in range(count):
            props = torch.cuda.get_device_properties(i)
            out.append(DeviceInfo(f"cuda:{i}", "cuda", props.name, False, props.total_memory))
    else:
        for i in range(SIMULATED_CUDA_COUNT):
            out.append(
                DeviceInfo(
                    f"cuda:{i}",
                    "cuda",
                    "simulated CUDA (values on the CPU, device rules from PyTorch)",
                    True,
                )
            )
    if mps:
        out.append(DeviceInfo("mps", "mps", "Apple Metal (MPS)"))
    return HostFacts(
        torch_version=str(torch.__version__),
        cuda_available=cuda,
        cuda_count=count,
        mps_available=mps,
        devices=tuple(out),
        cuda_build=torch.version.cuda,
    )


def facts_job(*, should_stop):
    """The job behind facts(): gather() in a worker."""
    yield "asking torch"
    return gather()


def placement_job(device: str, *, should_stop):
    """devices.model_placement(device) in a worker (simulated CUDA imports FakeTensorMode)."""
    from gradviz.devices import model_placement

    yield "building the model"
    return model_placement(device)


def memory_job(*, should_stop):
    """devices.memory_summary() in a worker: what the CUDA driver and a fresh allocator see."""
    from gradviz.devices import memory_summary

    yield "asking the CUDA allocator"
    return memory_summary()


# ---------------------------------------------------------------- in the server (no torch)

_facts: HostFacts | None = None
_facts_lock = threading.Lock()


def ask(kind: str, args: tuple = (), seconds: float = 60.0, memory_bytes: int = FACTS_MEMORY):
    """Run one small job to its end in a worker and return its result (no slot: these are
    short and light). Raises jobs.JobFailed with a plain message when it ends without one."""
    from gradviz import jobs

    limits = jobs.JobLimits(seconds=seconds, memory_bytes=memory_bytes)
    return jobs.run_now(kind, args, limits, None, f"asking the worker ({kind})")


def facts() -> HostFacts:
    """This host's facts, asked of a worker on first use and kept for the process's life."""
    global _facts
    with _facts_lock:
        if _facts is None:
            _facts = ask("host_facts", (), seconds=FACTS_SECONDS)
        return _facts


def torch_version() -> str:
    """The installed torch's version, read from its package metadata (no import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return "not installed"
