"""The language's index: every node type the checker allows has its handler in the
interpreter's tables (a statement, an expression, or a part its parent reads), and no table
handles a node the checker refuses."""

from __future__ import annotations

import ast

from gradviz.program.interpreter.class_statements import ClassStatements
from gradviz.program.interpreter.control import Control
from gradviz.program.interpreter.displays import Displays
from gradviz.program.interpreter.expressions import EXPRESSIONS, Evaluator
from gradviz.program.interpreter.imports import Imports
from gradviz.program.interpreter.indexing import Indexing
from gradviz.program.interpreter.names import Names
from gradviz.program.interpreter.outputs import Outputs
from gradviz.program.interpreter.run import run_program
from gradviz.program.interpreter.statements import PARTS, STATEMENTS, Interpreter
from gradviz.program.interpreter.updates import Updates
from gradviz.program.runtime.comprehensions import Comprehensions
from gradviz.program.syntax.grammar import ALLOWED_NODES


def test_the_checker_and_the_interpreter_know_the_same_nodes():
    handled = set(STATEMENTS) | set(EXPRESSIONS) | PARTS
    allowed = set(ALLOWED_NODES)
    assert handled - allowed == set(), "handled, but the checker refuses them"
    assert allowed - handled == set(), "allowed, but nothing runs them"
    assert not set(STATEMENTS) & set(EXPRESSIONS)
    assert not (set(STATEMENTS) | set(EXPRESSIONS)) & PARTS


def test_every_handler_is_a_method():
    for kind, name in STATEMENTS.items():
        owner, _, method = name.rpartition(".")
        cls = {
            "": Interpreter,
            "control": Control,
            "names": Names,
            "outputs": Outputs,
            "class_statements": ClassStatements,
            "updates": Updates,
            "imports": Imports,
        }[owner]
        assert issubclass(kind, ast.stmt) and callable(getattr(cls, method)), kind
    for kind, name in EXPRESSIONS.items():
        owner, _, method = name.rpartition(".")
        cls = {
            "": Evaluator,
            "comprehensions": Comprehensions,
            "displays": Displays,
            "indexing": Indexing,
        }[owner]
        assert issubclass(kind, ast.expr) and callable(getattr(cls, method)), kind


def test_a_program_using_every_statement_runs():
    source = (
        "import torch\nimport math\nfrom torch import nn\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 1)\n    def forward(self, x):\n        return self.fc(x)\n"
        "def f(a):\n    return a * 2\n"
        "from dataclasses import dataclass\n@dataclass\nclass C:\n    n: int = 1\n"
        "x = torch.ones(2, requires_grad=True)\ny = f(x)\ny += 1\n"
        "for i in range(2):\n    if i == 1:\n        break\n    else:\n        continue\n"
        "while False:\n    pass\n"
        "with torch.no_grad():\n    z = x + 1\n"
        "assert math.pi > 3\n"
        "out = Net()(x).sum() + len({1, 2}) if True else Net()(x).sum()\n"
        "s = f'{1}' + str([k for k in (1, 2)]) + str({k: k for k in [1]}) + str(-1)\n"
        "g = (lambda v: v)(1)\n"
        "if len(s) < 0:\n    raise ValueError('never')\n"
    )
    trace = run_program(source)
    assert trace.error is None, trace.error
