"""Worker processes: the warm pool for short programs (pool), processes started per heavy
job (jobs), the one shape of what they send (protocol), their limits and what they may use
(resources). Plain data out; no torch."""
