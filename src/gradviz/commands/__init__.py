"""Subcommands of `python -m gradviz`, one module each."""
