"""Errors that teach: the messages a class reads when a program goes wrong, in plain words."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.reports import kind_title
from gradviz.program.results.trace import RunOptions
from gradviz.program.syntax.program_error import did_you_mean, edit_distance

ROOT = Path(__file__).resolve().parents[3]


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
    ("y", ["x", "w", "b"], None),  # another one-letter name is not a typo of it
    ("xs", ["x", "ys", "w"], "Did you mean `x`?"),
]


@pytest.mark.parametrize(("typed", "names", "hint"), TYPOS)
def test_typical_student_typos_find_the_name_meant(typed, names, hint):
    assert did_you_mean(typed, names) == hint


def test_suggestions_are_few():
    names = ["lossa", "lossb", "lossc", "lossd", "losse"]
    assert did_you_mean("lossx", names).count("`") == 6  # three names, each in backticks


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


# ---------------------------------------------------------------- files and torchvision

NO_FILES = "this app's programs cannot write files: torch.save and torch.load are not available"


@pytest.mark.parametrize(
    "source",
    [
        "torch.save(1, 'a.pt')\n",
        "net = nn.Linear(2, 1)\ntorch.save(net.state_dict(), './cifar_net.pth')\n",
        "m = torch.load('a.pt')\n",
        "f = torch.save\n",
    ],
)
def test_saving_and_loading_say_a_program_cannot_touch_files(source):
    err = error_of(source)
    assert err.kind == "name" and err.message.startswith(NO_FILES)
    assert "keep the model in a variable" in err.message and err.hint is None


@pytest.mark.parametrize(
    "source", ["f = open('data.txt')\n", "with open('a.txt') as f:\n    pass\n"]
)
def test_open_says_a_program_cannot_read_files(source):
    err = error_of(source)
    assert err.kind in ("name", "forbidden") and "cannot read or write files" in err.message
    assert err.hint is None


def test_a_function_named_open_is_still_the_programs_own():
    trace = run_program("def open(x):\n    return x + 1\nprint(open(2))\n")
    assert trace.error is None and trace.stdout == ["3"]


@pytest.mark.parametrize(
    "source",
    [
        "import torchvision\n",
        "import torchvision.transforms as transforms\n",
        "from torchvision import datasets, transforms\n",
        "from torchvision.datasets import CIFAR10\n",
    ],
)
def test_torchvision_names_the_cifar_sample_and_the_training_page(source):
    err = error_of(source)
    assert err.kind == "forbidden" and err.line == 1
    assert "gradviz_cifar10_sample(4)" in err.message
    assert "CIFAR-10 training page" in err.message


def test_import_time_is_still_allowed():
    assert run_program("import time\nt = time.time()\n").error is None


# ---------------------------------------------------------------- None gradients

NOT_A_LEAF = (
    "`.grad` is None because `y` is not a leaf: autograd keeps gradients only for leaves "
    "(tensors you made with requires_grad=True). Call `y.retain_grad()` before backward() "
    "to keep it"
)
INTERMEDIATE = "x = torch.ones(3, requires_grad=True)\ny = x * 2\nz = y.sum()\nz.backward()\n"


def test_reading_grad_of_a_non_leaf_warns_in_plain_words():
    trace = run_program(INTERMEDIATE + "print(y.grad)\n")
    assert trace.error is None and trace.stdout == ["None"]
    assert [(w.line, w.message) for w in trace.warnings] == [(5, NOT_A_LEAF)]
    assert "TensorBody" not in str(trace.warnings)


def test_using_grad_of_a_non_leaf_is_an_error_at_its_line():
    trace = run_program(INTERMEDIATE + "g = y.grad * 2\n")
    err = trace.error
    assert (err.kind, err.message, err.line, err.col) == ("type", NOT_A_LEAF, 5, 5)
    assert trace.warnings == []  # said once, as the error


def test_retain_grad_keeps_it_and_nothing_is_said():
    trace = run_program(
        INTERMEDIATE.replace("z = y", "y.retain_grad()\nz = y") + "g = y.grad * 2\n"
    )
    assert trace.error is None and trace.warnings == []


def test_w_equals_w_minus_says_w_is_no_longer_a_leaf():
    source = (
        "w = torch.ones(3, requires_grad=True)\nlr = 0.1\nfor i in range(2):\n"
        "    loss = (w * 2).sum()\n    loss.backward()\n    w = w - lr * w.grad\n"
    )
    err = error_of(source)
    assert err.message == (
        "`.grad` is None because `w` is no longer a leaf after `w = w - lr * w.grad`: "
        "update it in place under `with torch.no_grad(): w -= lr * w.grad`"
    )
    assert (err.line, err.col) == (6, 18)


def test_update_in_place_under_no_grad_runs():
    source = (
        "w = torch.ones(3, requires_grad=True)\nlr = 0.1\nfor i in range(2):\n"
        "    loss = (w * 2).sum()\n    loss.backward()\n    with torch.no_grad():\n"
        "        w -= lr * w.grad\n    w.grad.zero_()\n"
    )
    assert run_program(source).error is None


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (
            "w = torch.ones(3, requires_grad=True)\ng = w.grad * 2\n",
            "backward() was not called yet",
        ),
        (
            "w = torch.ones(3, requires_grad=True)\nw.grad.zero_()\n",
            "backward() was not called yet",
        ),
        ("w = torch.ones(3)\ng = -w.grad\n", "`w` does not require grad"),
        (
            "w = torch.ones(3, requires_grad=True)\nb = torch.ones(3, requires_grad=True)\n"
            "(w * 2).sum().backward()\ng = b.grad + 1\n",
            "no backward() has reached it",
        ),
    ],
)
def test_a_none_grad_used_says_why_it_is_none(source, words):
    err = error_of(source)
    assert err.kind == "type" and err.message.startswith("`.grad`") and words in err.message
    assert "NoneType" not in err.message


# ---------------------------------------------------------------- no internal words

KINDS = ("syntax", "forbidden", "name", "limit", "type", "runtime", "internal")


def test_every_error_kind_has_a_plain_title():
    titles = {kind: kind_title(kind) for kind in KINDS}
    assert titles["forbidden"] == "Not part of this language"
    assert titles["name"] == "Unknown name"
    assert titles["limit"] == "Size limit"
    assert titles["type"] == "Type mismatch"
    assert titles["runtime"] == "Error while running"
    assert titles["syntax"] == "Syntax error"
    assert len(set(titles.values())) == len(KINDS)
    assert all(title != kind and title[0].isupper() for kind, title in titles.items())


def test_the_pages_head_an_error_with_its_title_not_its_kind():
    pages = [ROOT / "src/gradviz/ui/autograd/page.py", ROOT / "src/gradviz/ui/devices/page.py"]
    for page in pages:
        text = page.read_text()
        assert "err.kind} error" not in text and "else err.kind" not in text
        assert "kind_title(err.kind)" in text


def test_simulated_cuda_is_said_without_fake_tensor_mode():
    source = "x = torch.ones(2, device='cuda')\ny = torch.ones(2)\nz = x + y\n"
    trace = run_program(
        source.replace("z = x + y\n", "a = torch.cuda.is_available()\n"),
        RunOptions(simulate_cuda=True),
    )
    assert trace.error is None
    assert any("answered True (simulated)" in n for n in trace.device_notes)
    assert not any("FakeTensorMode" in n for n in trace.device_notes)
    err = run_program(source, RunOptions(simulate_cuda=True)).error
    assert "simulated CUDA" in err.details.device.source
    assert "FakeTensorMode" not in err.details.device.source + err.message


def test_no_fake_tensor_mode_in_what_the_device_pages_say():
    for path in (ROOT / "src/gradviz/ui/device_panel.py", ROOT / "src/gradviz/ui/devices/page.py"):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
        }
        said = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
        ]
        assert not [s for s in said if "FakeTensorMode" in s], path
