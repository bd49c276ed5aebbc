"""CPU against GPU, timed correctly: workloads, estimates and reference files (timing),
and the measurements themselves in job workers (measure)."""
