"""Training in several processes with torch.distributed: DistributedDataParallel, NCCL between
GPUs, gloo on the CPU.

Each process (a rank) reads the data, keeps its shard of the training images (every world-th
image, all shards the same size) and trains a copy of the network wrapped in
DistributedDataParallel, which averages the gradients of all ranks in every backward pass: N
ranks with batch B/N each take the steps of one process with batch B. Rank 0 reports progress
(its shard's loss and accuracy, the images of all ranks), decides when to stop (a stop request
or the time limit) and tells the others with a broadcast at the same steps on every rank, and
sends the trained weights as a state_dict (saved as `save_state_dict` saves one, so it loads in
the ordinary single-process evaluator).

Two ways to start the ranks, both PyTorch's own:

* `launch` (the CLI's `--nproc N`, the page): torch.multiprocessing's spawn context starts N
  processes on this host, rendezvous over TCP on 127.0.0.1; events and the result come back over
  a queue. A rank that fails or is killed ends the run: the others are terminated and
  DistributedError names the rank and how it ended. A rank whose launcher dies exits too.
* torchrun (`torch.distributed.run`, also across machines with a rendezvous endpoint): the
  environment names the rank; `group_run` trains in the calling process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from datetime import timedelta
from multiprocessing import connection as mp_connection

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

from gradviz.training.checkpoint import load_weights, save_state_dict
from gradviz.training.data import Dataset, Split, load_source
from gradviz.training.events import Progress, Started
from gradviz.training.hardware import DeviceError, resolve_device
from gradviz.training.loop import Options, Trainer, TrainResult, settle_preset
from gradviz.training.settings import ddp_backend, rank_placement
from gradviz.util.resources import available_cpus
from gradviz.workers.process import signal_name
from gradviz.workers.protocol import (
    ErrorKind,
    Message,
    ProtocolError,
    Tag,
    WorkerError,
    failed,
    receive,
    send,
)

STOP_CODES = {None: 0, "time limit": 1, "stop requested": 2}
STOP_REASONS = {code: reason for reason, code in STOP_CODES.items()}
TIMEOUT_S = 120.0  # a collective waiting longer than this fails (a rank died or hangs)


class DistributedError(Exception):
    """A rank failed, was killed or could not start; the message says which and why."""


@dataclass(frozen=True)
class RunSpec:
    """What every rank trains: plain values, so it crosses to spawned processes as is."""

    source: dict  # {"kind": "folder" | "cifar", "path": ...} (gradviz.training.data.load_source)
    preset: str = "fast"
    device: str = "auto"  # auto | cpu | cuda
    epochs: int | None = None
    batch_size: int | None = None  # the global batch, split evenly over the ranks
    lr: float | None = None
    time_limit: float | None = None
    seed: int | None = 0
    threads: int | None = None  # per rank; default: the host's cores shared out
    eval_each_epoch: bool = False
    progress_every_s: float = 0.5
    timeout_s: float = TIMEOUT_S


@dataclass(frozen=True)
class Trained:
    """Rank 0's result: plain data, the weights as torch.save'd state_dict bytes."""

    weights: bytes
    arch: str
    preset: str
    device: str
    placement: tuple[str, ...]
    epochs_done: float
    images_seen: int
    train_seconds: float
    images_per_s: float
    stopped: str | None
    history: tuple[Progress, ...]

    def result(self, num_classes: int) -> TrainResult:
        """The weights loaded as any saved file is (gradviz.training.checkpoint.load_weights)."""
        _arch, model = load_weights(self.weights, num_classes=num_classes)
        return TrainResult(
            model=model,
            arch=self.arch,
            preset=self.preset,
            device=self.device,
            epochs_done=self.epochs_done,
            images_seen=self.images_seen,
            train_seconds=self.train_seconds,
            images_per_s=self.images_per_s,
            stopped=self.stopped,
            history=list(self.history),
        )


def shard(split: Split, rank: int, world: int) -> Split:
    """Rank `rank`'s share of a split: every world-th image from `rank` on. All shards have the
    same size (up to world - 1 images are left out), so every rank takes the same steps."""
    n = len(split) - len(split) % world
    return Split(split.images[rank:n:world].clone(), split.labels[rank:n:world].clone())


class DistributedTrainer(Trainer):
    """A Trainer for one rank: its shard, batch size / world, the network in
    DistributedDataParallel, and rank 0's stop decision and clock broadcast every
    `stop_every` steps (the same steps on every rank, so the collectives pair up)."""

    def __init__(self, data: Dataset, p, device, opts: Options, rank: int, world: int):
        if p.batch_size % world:
            raise ValueError(
                f"Batch size {p.batch_size} does not split evenly over {world} processes; "
                f"choose a multiple of {world}."
            )
        self.rank, self.world = rank, world
        self.stop_every = 8 if device.type == "cuda" else 1  # each check waits for the GPU
        self.agreed_clock = 0.0
        local = Dataset(shard(data.train, rank, world), data.test, data.classes, data.source)
        if rank:
            opts = replace(opts, should_stop=None, eval_each_epoch=False)
        super().__init__(local, replace(p, batch_size=p.batch_size // world), device, opts)
        self.ranks = world
        self.n = len(local.train) * world
        self.images_total = self.n * p.epochs
        if opts.seed is not None:  # the same start everywhere, then each rank its own shuffles
            torch.manual_seed(opts.seed + 1 + rank)

    def _build_model(self):
        self.net = super()._build_model()
        ids = [self.dev.index] if self.dev.type == "cuda" else None
        return DistributedDataParallel(self.net, device_ids=ids)

    def network(self):
        return self.net

    def stop_reason(self) -> str | None:
        if self.step % self.stop_every:
            return None
        local = super().stop_reason() if self.rank == 0 else None
        told = torch.tensor(
            [float(STOP_CODES[local]), self.elapsed()], dtype=torch.float64, device=self.dev
        )
        dist.broadcast(told, src=0)
        code, self.agreed_clock = told.tolist()
        return STOP_REASONS[int(code)]

    def clock(self) -> float:
        return self.agreed_clock


# ----------------------------------------------------------------------------- one rank


def rank_device(choice: str, local_rank: int) -> torch.device:
    """The device of a rank: its own GPU (cuda:local_rank) or the CPU."""
    device = resolve_device(choice)
    if device.type == "cuda":
        count = torch.cuda.device_count()
        if local_rank >= count:
            raise DeviceError(f"rank {local_rank} has no GPU: this host has {count}")
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    if device.type != "cpu":
        raise DeviceError(f"several processes train on CUDA GPUs or the CPU, not on {device.type}")
    return device


def rank_threads(spec: RunSpec, local_world: int) -> int:
    return spec.threads or max(1, available_cpus() // local_world)


def group_run(
    data: Dataset,
    spec: RunSpec,
    device: torch.device,
    should_stop: Callable[[], bool] | None = None,
    threads: int | None = None,
) -> Generator[Started | Progress, None, Trained | None]:
    """Train as this rank of the process group already started: rank 0 yields Started and the
    Progress readings (the end one included) and returns the Trained result; other ranks yield
    nothing and return None."""
    rank, world = dist.get_rank(), dist.get_world_size()
    p = settle_preset(spec.preset, spec.epochs, spec.batch_size, spec.lr)
    opts = Options(
        time_limit=spec.time_limit,
        should_stop=should_stop,
        progress_every_s=spec.progress_every_s,
        eval_each_epoch=spec.eval_each_epoch,
        seed=spec.seed,
        threads=threads,
    )
    trainer = DistributedTrainer(data, p, device, opts, rank, world)
    per_machine = int(os.environ.get("LOCAL_WORLD_SIZE", world))  # torchrun says; else one host
    names = ()
    if device.type == "cuda":
        names = tuple(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
    placement = tuple(rank_placement(world, device.type, names, per_machine))
    where = f"cuda:0-{min(world, per_machine) - 1}" if device.type == "cuda" else "cpu"
    if per_machine < world:
        where += f" on each of {world // per_machine} machines"
    label = f"{world} processes, {ddp_backend(device.type)}: {where}"
    final = None
    for ev in trainer.run():
        if ev.kind == "end":
            final = ev.result
        if rank == 0:
            yield Started(arch=trainer.arch, device=label) if ev.kind == "start" else ev.plain()
    if rank:
        return None
    return Trained(
        weights=save_state_dict(final.model),
        arch=final.arch,
        preset=final.preset,
        device=label,
        placement=placement,
        epochs_done=final.epochs_done,
        images_seen=final.images_seen,
        train_seconds=final.train_seconds,
        images_per_s=final.images_per_s,
        stopped=final.stopped,
        history=tuple(final.history),
    )


def start_group(backend: str, timeout_s: float, rank=None, world=None, init_method="env://"):
    kwargs = {} if rank is None else {"rank": rank, "world_size": world}
    dist.init_process_group(
        backend, init_method=init_method, timeout=timedelta(seconds=timeout_s), **kwargs
    )


def end_group() -> None:
    """Leave the process group, when this process is in one, as torch asks before a process
    exits (the process then ends by exit_rank, not by the interpreter's shutdown)."""
    if dist.is_initialized():
        dist.destroy_process_group()


def _watch_parent(parent_pid: int) -> None:
    """End this rank when the process that launched it is gone (killed or crashed)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(3)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _rank_main(rank: int, world: int, spec: RunSpec, port: int, conn, parent: int):
    """A spawned rank, talking to the launcher over its own pipe (no queue: a sandboxed job may
    create no files, not even a semaphore's). Ctrl-C is the launcher's: it asks rank 0 to stop
    by sending a stop message (gradviz.workers.protocol)."""
    _watch_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    code = 0
    asked = threading.Event()

    def should_stop() -> bool:
        while not asked.is_set() and conn.poll():
            if receive(conn).tag == Tag.STOP:
                asked.set()
        return asked.is_set()

    try:
        device = rank_device(spec.device, rank)
        data = load_source(spec.source)
        init = f"tcp://127.0.0.1:{port}"
        start_group(ddp_backend(device.type), spec.timeout_s, rank, world, init)
        run = group_run(data, spec, device, should_stop, rank_threads(spec, world))
        while True:
            try:
                send(conn, Message(Tag.EVENT, next(run)))
            except StopIteration as done:
                send(conn, Message(Tag.DONE, done.value))
                break
        dist.destroy_process_group()
    except Exception as exc:  # the launcher reports it with the rank
        send(conn, failed(WorkerError.of(exc)))
        code = 1
    with contextlib.suppress(OSError):
        conn.close()
    exit_rank(code)


def exit_rank(code: int) -> None:
    """End a rank's process once all it has to say is sent and written, skipping the
    interpreter's shutdown. That shutdown destroys the process group's C++ state, and 1 rank
    in 20 to 60 runs on this host ended there with "terminate called without an active
    exception" (a SIGABRT after Python's own exit handlers had run, markers showed): the
    launcher, or torchrun, then rightly reports a failed rank though the run was complete."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


# ----------------------------------------------------------------------------- the launcher


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _failure(procs, errors: dict[int, WorkerError]) -> str:
    world = len(procs)
    parts = []
    for rank, proc in enumerate(procs):
        code = proc.exitcode
        if code is not None and code < 0:
            parts.append(f"rank {rank} of {world} was ended by {signal_name(code)}")
        elif rank in errors:
            parts.append(f"rank {rank} of {world} failed: {errors[rank].text()[:300]}")
        elif code not in (None, 0):
            parts.append(f"rank {rank} of {world} exited with status {code}")
    return "; ".join(parts) + ". The other ranks were stopped."


def _end(procs, grace: float = 5.0) -> None:
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + grace
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join()


def launch(
    spec: RunSpec, nproc: int, should_stop: Callable[[], bool] | None = None
) -> Generator[Started | Progress, None, Trained]:
    """Start nproc ranks on this host, yield rank 0's events, return its Trained result.
    should_stop is polled between messages; a failed or killed rank raises DistributedError
    once the others are stopped. No rank outlives this generator."""
    if nproc < 2:
        raise ValueError("several processes means at least 2")
    ctx = mp.get_context("spawn")
    port = free_port()
    pipes = [ctx.Pipe() for _ in range(nproc)]
    procs = [
        ctx.Process(
            target=_rank_main,
            args=(rank, nproc, spec, port, pipes[rank][1], os.getpid()),
            daemon=True,
            name=f"gradviz-rank-{rank}",
        )
        for rank in range(nproc)
    ]
    try:
        for proc, (_, child) in zip(procs, pipes, strict=True):
            proc.start()
            child.close()
        return (yield from _follow(procs, [mine for mine, _ in pipes], should_stop))
    finally:
        _end(procs)


def _follow(procs, conns, should_stop) -> Generator[Started | Progress, None, Trained]:
    errors: dict[int, WorkerError] = {}
    final, stop_sent, open_conns = None, False, set(range(len(conns)))
    while True:
        if not stop_sent and should_stop is not None and should_stop():
            with contextlib.suppress(OSError):
                send(conns[0], Message(Tag.STOP))
            stop_sent = True
        for conn in mp_connection.wait([conns[r] for r in open_conns], timeout=0.2):
            rank = conns.index(conn)
            try:
                message = receive(conn)
            except (EOFError, OSError):
                open_conns.discard(rank)
                continue
            except ProtocolError as exc:
                errors[rank] = WorkerError(
                    ErrorKind.FAILED, f"it sent what is not a message: {exc}"
                )
                continue
            if message.tag == Tag.EVENT and rank == 0:
                yield message.value
            elif message.tag == Tag.DONE and rank == 0:
                final = message.value
            elif message.tag == Tag.ERROR:
                errors[rank] = message.error
        codes = [proc.exitcode for proc in procs]
        if errors or any(code not in (None, 0) for code in codes):
            time.sleep(0.3)  # let a killed rank's partners report or be seen ending
            raise DistributedError(_failure(procs, errors))
        if all(code == 0 for code in codes) and not open_conns:
            if final is None:
                raise DistributedError("rank 0 ended without sending its result.")
            return final
