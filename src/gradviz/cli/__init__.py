"""The command line, `python -m gradviz`: main builds the parser, each other module is one
subcommand (run, render, speed, train) with `register(subparsers)`."""
