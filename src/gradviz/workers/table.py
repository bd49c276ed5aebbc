"""The one table of what worker processes run, by name ("module:function"): imported in the
worker, never in the server, so the server's modules stay free of torch, and program text
cannot choose a job. Test-only jobs are listed apart and exist only in pools and jobs made
with testing=True (gradviz.workers.testing).

- PRELOAD: modules the app's forkserver imports once before forking any worker (warm
  workers, shared by every visitor: a warm-up run pays torch's lazy imports in advance).
- CLI_PRELOAD: the command line's (one program per process): the hooks and the interpreter
  only, so a run pays only for the parts of torch its program uses.
- HOOKS: the module whose prepare(threads), self_test() and state() every worker calls.
- PROGRAM_JOBS: the warm pool's short jobs (a function returning a value).
- JOBS: the job workers' long jobs (a generator: each value it yields is an event, its
  return value the result; it reads stop requests through its should_stop argument).
"""

from __future__ import annotations

from types import MappingProxyType

PRELOAD = ("gradviz.program.preload",)
CLI_PRELOAD = ("gradviz.program.worker_hooks",)
HOOKS = "gradviz.program.worker_hooks"

PROGRAM_JOBS = MappingProxyType(
    {
        "run": "gradviz.program.worker_hooks:run_job",
        "check": "gradviz.program.worker_hooks:check_job",
    }
)
TEST_PROGRAM_JOBS = MappingProxyType(
    {
        "crash": "gradviz.workers.testing:pool_crash",
        "hang": "gradviz.workers.testing:pool_hang",
        "allocate": "gradviz.workers.testing:pool_allocate",
        "keep": "gradviz.workers.testing:pool_keep",
        "spike": "gradviz.workers.testing:pool_spike",
        "pid": "gradviz.workers.testing:pool_pid",
        "state": "gradviz.program.worker_hooks:state",
        "dirty": "gradviz.workers.testing:pool_dirty",
    }
)

JOBS = MappingProxyType(
    {
        "train": "gradviz.training.jobs:train_job",
        "evaluate_weights": "gradviz.training.jobs:evaluate_weights_job",
        "speed_point": "gradviz.speed.measure:point_job",
        "speed_compare": "gradviz.speed.measure:compare_job",
        "speed_sweep": "gradviz.speed.measure:sweep_job",
        "transfer": "gradviz.devices.transfer:measure_job",
        "host_facts": "gradviz.devices.facts:facts_job",
        "placement": "gradviz.devices.facts:placement_job",
        "cuda_memory": "gradviz.devices.facts:memory_job",
        "walkthrough_gif": "gradviz.graph.walkthrough_gif:gif_job",
    }
)
TEST_JOBS = MappingProxyType(
    {
        "count": "gradviz.workers.testing:job_count",
        "crash": "gradviz.workers.testing:job_crash",
        "hang": "gradviz.workers.testing:job_hang",
        "allocate": "gradviz.workers.testing:job_allocate",
        "fail": "gradviz.workers.testing:job_fail",
        "threads": "gradviz.workers.testing:job_threads",
        "write": "gradviz.workers.testing:job_write",
    }
)
