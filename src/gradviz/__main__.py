"""`python -m gradviz`: the same entry point as the installed `gradviz` script."""

from gradviz.cli.main import console

console()
