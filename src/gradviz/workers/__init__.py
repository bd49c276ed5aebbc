"""Worker processes: the warm pool for short programs (pool), processes started per heavy
job (jobs), their limits and what they may use (resources). Plain data out; no torch."""
