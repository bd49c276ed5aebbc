"""Fixtures for the security suite: a worker pool with the test-only jobs enabled."""

from __future__ import annotations

import pytest

from gradviz.workers.pool import Pool, SandboxLimits


@pytest.fixture(scope="session")
def pool():
    """Two workers, short limits, and the crash/hang/allocate jobs only tests can send."""
    with Pool(
        # max_jobs past the corpus (400 programs and more): test_corpus_through_the_workers
        # asks that the same two workers run it all, none recycled on the way
        SandboxLimits(
            workers=2, run_seconds=10, check_seconds=20, memory_bytes=900_000_000, max_jobs=5_000
        ),
        testing=True,
    ) as p:
        yield p
