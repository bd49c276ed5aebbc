"""The caps checked before work runs: a torch call's size pre-check (shapes, memory, FLOPs) and the
language's own work (steps, loops, items, characters)."""
