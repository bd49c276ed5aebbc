"""gradviz's version (pyproject.toml's), for the pages' footer and `gradviz.__version__`."""

VERSION = "0.1.0"
