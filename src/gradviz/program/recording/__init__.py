"""What a run records as it goes: the run's shared state, its backward passes node by node, its
steps, in-place changes, the names each statement read, and the quiet passes of long loops."""
