"""Statements and expressions: the interpreter that runs a checked program into a Trace, its
control flow, expressions and a program's own classes."""
