"""What a program's result costs the server to read back from its worker, for programs whose
results are small pickled and were big unpickled: the reply's size on the wire, the memory
the server held reading it (tracemalloc around the pool call: the unpickling is the server's
part of it), and the server's CPU for one more session's copy (pickle.loads of the cached
result, what run_cached does for a session that has none).

    PYTHONPATH=src python bench/result_readback.py [--public]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
import tracemalloc
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "src")]


def _names(n: int, prefix: str = "a") -> str:
    return ", ".join(f"{prefix}{i}" for i in range(n))


PROGRAMS = {
    "600 names of zeros(600, 4096, 0)": f"x = torch.zeros(600, 4096, 0)\n{_names(600)} = x.unbind()\n",
    "600 names of zeros(600, 2048, 2, 0)": (
        f"x = torch.zeros(600, 2048, 2, 0)\n{_names(600)} = x.unbind()\n"
    ),
    "2,500 names of rand(2500, 1)": f"x = torch.rand(2500, 1)\n{_names(2500)} = x.unbind()\n",
    "2,500 names of rand(2500, 4096)": f"x = torch.rand(2500, 4096)\n{_names(2500)} = x.unbind()\n",
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--public", action="store_true", help="GRADVIZ_PUBLIC=1 (workers too)")
    args = ap.parse_args()
    if args.public:
        os.environ["GRADVIZ_PUBLIC"] = "1"
    from gradviz.program.results.trace import RunOptions
    from gradviz.services.programs import run_isolated
    from gradviz.workers.pool import Pool, SandboxLimits

    print(f"public: {args.public}; date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with Pool(SandboxLimits(workers=1)) as pool:
        run_isolated("a = torch.ones(2)\n", RunOptions(), pool=pool)  # the worker is warm
        for label, source in PROGRAMS.items():
            tracemalloc.start()
            trace = run_isolated(source, RunOptions(), pool=pool)
            held, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            data = pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL)
            t0 = time.process_time()
            for _ in range(3):
                pickle.loads(data)
            loads = (time.process_time() - t0) / 3
            said = trace.error.message[:60] if trace.error else (trace.summary or ["-"])[-1][:60]
            print(
                f"{label:36s} pickled {len(data) / 1e6:6.2f} MB  server held {held / 1e6:6.1f} MB "
                f"(peak {peak / 1e6:6.1f})  one more copy {loads * 1000:6.0f} ms CPU  {said}"
            )


if __name__ == "__main__":
    main()
