"""Write src/gradviz/services/landing.pickle: the lesson's result, run for real in an isolated
worker with the landing page's first options (local and public limits). The page serves it
to a first visit before any worker is ready (gradviz.services.landing); rewrite it when
tests/unit/services/test_landing.py says it differs from a fresh run.

    python scripts/landing_result.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gradviz.services import landing  # noqa: E402
from gradviz.workers.pool import Pool, SandboxLimits  # noqa: E402


def main() -> int:
    with Pool(SandboxLimits(workers=1)) as pool:
        data = landing.make(pool)
    landing.LANDING_FILE.write_bytes(data)
    print(f"wrote {landing.LANDING_FILE} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
