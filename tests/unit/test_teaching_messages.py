"""Errors that teach: the messages a class reads when a program goes wrong, in plain words."""

from __future__ import annotations

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.syntax.program_error import did_you_mean, edit_distance


def error_of(source: str):
    trace = run_program(source)
    assert trace.error is not None, "expected an error"
    return trace.error


# ---------------------------------------------------------------- did you mean

TYPOS = [
    # (typed, names in reach, the suggestion)
    ("Ture", ["True", "False", "None", "tuple", "type"], "Did you mean `True`?"),
    ("Flase", ["True", "False", "None", "float"], "Did you mean `False`?"),
    ("W", ["w", "x", "b"], "Did you mean `w`?"),
    ("Print", ["print", "int", "min"], "Did you mean `print`?"),
    ("Zeros", ["zeros", "zeros_like", "cross", "ones"], "Did you mean `zeros`?"),
    ("lenght", ["len", "length", "list"], "Did you mean `length`?"),
    ("rnage", ["range", "round", "rand"], "Did you mean `range`?"),
    ("backwrd", ["backward", "backends"], "Did you mean `backward`?"),
    ("lr", ["lr", "lrs"], "Did you mean `lrs`?"),
    ("qqqq", ["ones", "zeros"], None),
]


@pytest.mark.parametrize(("typed", "names", "hint"), TYPOS)
def test_typical_student_typos_find_the_name_meant(typed, names, hint):
    assert did_you_mean(typed, names) == hint


def test_suggestions_are_few():
    names = ["ab", "ac", "ad", "ae", "af", "ag"]
    assert did_you_mean("aa", names).count("`") == 6  # three names, each in backticks


def test_edit_distance_counts_a_swap_as_one_edit():
    assert edit_distance("ture", "true") == 1
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3


@pytest.mark.parametrize(
    ("source", "hint"),
    [
        ("x = Ture\n", "Did you mean `True`?"),
        ("w = 1\ny = W + 1\n", "Did you mean `w`?"),
        ("a = torch.Zeros(3)\n", "Did you mean `zeros`?"),
        ("Print(1)\n", "Did you mean `print`?"),
    ],
)
def test_a_program_with_a_typo_gets_one_suggestion(source, hint):
    err = error_of(source)
    assert (err.kind, err.hint) == ("name", hint)
