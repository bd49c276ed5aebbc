"""gradviz.program.syntax.checker: what the language refuses, with kind and 1-based line/column, and its caps."""

from __future__ import annotations

import ast

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.interpreter.statements import RESERVED_NAMES
from gradviz.program.results.limits import PUBLIC_PROGRAM_LIMITS, Limits
from gradviz.program.syntax.checker import parse
from gradviz.program.syntax.program_error import ProgramError, char_col, did_you_mean
from gradviz.util.format import fmt_bytes


def refuse(source: object, limits: Limits | None = None) -> ProgramError:
    kwargs = {"known_names": RESERVED_NAMES}
    if limits is not None:
        kwargs["limits"] = limits
    with pytest.raises(ProgramError) as info:
        parse(source, **kwargs)
    err = info.value
    assert err.kind in ("syntax", "forbidden", "name", "limit", "type")
    return err


# (source, kind, line, col, words in the message)
FORBIDDEN = [
    ("import os\n", "forbidden", 1, 1, "import"),
    ("x = 1\nfrom os import path\n", "forbidden", 2, 1, "import"),
    ("class A(metaclass=M):\n    pass\n", "forbidden", 1, 1, "metaclass"),
    ("x = torch.ones(3)\ny = x.__class__\n", "forbidden", 2, 5, "__class__"),
    ("__import__('os')\n", "forbidden", 1, 1, "__import__"),
    ("x = torch._C\n", "forbidden", 1, 5, "_C"),
    ("__x = 1\n", "forbidden", 1, 1, "__x"),
    ("x = torch.ones(3)\ntorch.add(x, x, out=x)\n", "forbidden", 2, 17, "out="),
    ("with torch.ones(3) as f:\n    pass\n", "forbidden", 1, 6, "no_grad"),
    ("with torch.no_grad() as g:\n    pass\n", "forbidden", 1, 25, "as"),
    ("torch = 1\n", "forbidden", 1, 1, "torch"),
    ("a, torch = 1, 2\n", "forbidden", 1, 4, "torch"),
    ("F = 2\n", "forbidden", 1, 1, "F"),
    ("print = 2\n", "forbidden", 1, 1, "print"),
    ("try:\n    x = 1\nexcept* Exception:\n    pass\n", "forbidden", 1, 1, "except*"),
    ("try:\n    x = 1\nexcept SystemExit:\n    pass\n", "forbidden", 3, 8, "except"),
    ("del torch\n", "forbidden", 1, 5, "cannot be deleted"),
    ("del print, x\n", "forbidden", 1, 5, "cannot be deleted"),
    ("x = torch.ones(1)\ndel x.grad\n", "forbidden", 2, 5, "`del` takes a name"),
    ("del f()[0]\n", "forbidden", 1, 5, "`del` takes a name"),
    ("del __builtins__\n", "forbidden", 1, 5, "underscore"),
    ("(x := 1)\n", "forbidden", 1, 2, "walrus"),
    ("x = b'a'\n", "forbidden", 1, 5, "bytes"),
    ("x = 1j\n", "forbidden", 1, 5, "complex"),
    ("x: int\n", "forbidden", 1, 1, "annotated"),
    ("d = {}\nd['k']: int = 1\n", "forbidden", 2, 1, "annotated"),
    ("x: f() = 1\n", "forbidden", 1, 4, "an annotation is made of"),
    ("__x: int = 1\n", "forbidden", 1, 1, "underscore"),
    ("x = torch.ones(2)\ntorch.ones(2)[0] = 1\n", "forbidden", 2, 1, "named tensor"),
    # the constructs the language grew keep their own refusals
    ("import pandas as pd\n", "forbidden", 1, 1, "`pandas` is not available"),
    ("from math import _e\n", "forbidden", 1, 18, "imported names beginning with `_`"),
    ("from torch import *\n", "forbidden", 1, 1, "name what you need"),
    ("import torch.nn as F\n", "forbidden", 1, 1, "cannot name torch.nn"),
    ("import math as print\n", "forbidden", 1, 1, "built-in name"),
    ("from . import x\n", "forbidden", 1, 1, "relative"),
    ("@decorator\ndef f():\n    pass\n", "forbidden", 1, 2, "this decorator is not part"),
    ("def f(a, a):\n    pass\n", "syntax", 1, 10, "twice"),
    ("def __f():\n    pass\n", "forbidden", 1, 1, "underscore"),
    ("def f(__a):\n    pass\n", "forbidden", 1, 7, "underscore"),
    ("def len():\n    pass\n", "forbidden", 1, 1, "built-in name"),
    ("def f():\n    global __builtins__\n", "forbidden", 2, 5, "underscore"),
    ("def f():\n    global torch\n", "forbidden", 2, 5, "built-in name"),
    ("nonlocal x\n", "syntax", 1, 1, "not allowed at module level"),
    ("def f():\n    nonlocal x\n", "syntax", 2, 5, "no binding for nonlocal 'x'"),
    ("def f():\n    print(y)\n    global y\n", "syntax", 3, 5, "used prior to global"),
    ("def f(y):\n    global y\n", "syntax", 2, 5, "parameter and global"),
    ("def f():\n    x = 1 + (yield 1)\n", "forbidden", 2, 14, "statement of its own"),
    ("yield 1\n", "syntax", 1, 1, "'yield' outside function"),
    ("async def f():\n    pass\n", "forbidden", 1, 1, "async"),
    ("return 1\n", "syntax", 1, 1, "outside a function"),
    ("break\n", "syntax", 1, 1, "outside a loop"),
    ("for i in [1]:\n    def g():\n        continue\n", "syntax", 3, 9, "outside a loop"),
    ("for i in [1]:\n    pass\nelse:\n    break\n", "syntax", 4, 5, "outside a loop"),
    ("for x[0] in [1]:\n    pass\n", "forbidden", 1, 5, "plain names"),
    ("for x.grad in [1]:\n    pass\n", "forbidden", 1, 5, "plain names"),
    ("y = [1 for x.a in [1]]\n", "forbidden", 1, 12, "plain names"),
    # `*` and `**`: where Python takes them, of plain names in targets, private names never
    ("def f(*__a):\n    pass\n", "forbidden", 1, 8, "underscore"),
    ("def f(**__kw):\n    pass\n", "forbidden", 1, 9, "underscore"),
    ("def f(a, *a):\n    pass\n", "syntax", 1, 11, "twice"),
    ("f = lambda *print: 0\n", "forbidden", 1, 13, "built-in name"),
    ("*a, *b = [1, 2]\n", "syntax", 1, 5, "multiple starred"),
    ("a, *b[0] = [1, 2]\n", "forbidden", 1, 4, "plain names"),
    ("for *a.b, c in [[1]]:\n    pass\n", "forbidden", 1, 5, "plain names"),
    ("a, *torch = [1, 2]\n", "forbidden", 1, 5, "torch"),
    ("y = f(__x=1)\n", "forbidden", 1, 7, "underscore"),
    ("y = (i for i in [1]).gi_frame\n", "forbidden", 1, 5, "generator frames"),
    ("f = lambda: 0\nc = f.func_globals\n", "forbidden", 2, 5, "machinery"),
    ("y = [1][0].f_back\n", "forbidden", 1, 5, "machinery"),
    ("y = f'{1:{x.__class__}}'\n", "forbidden", 1, 11, "underscore"),
]


@pytest.mark.parametrize(("source", "kind", "line", "col", "words"), FORBIDDEN)
def test_refusals_with_position(source, kind, line, col, words):
    err = refuse(source)
    assert err.kind == kind
    assert (err.line, err.col) == (line, col)
    assert words.lower() in err.message.lower()


# Constructs the language accepts since it grew (each once refused above): they parse.
ACCEPTED = [
    "global x\ndef f():\n    global x\n    x = 1\n    def g():\n        n = 0\n"
    "        def h():\n            nonlocal n\n            n += 1\n",
    "x = [1]\nd = {1: 2}\ndel x[0], d[1]\ndel x\n",
    "def f(a, *args, b=1, **kw):\n    return a\ng = lambda *a, **k: a\n",
    "x = torch.ones(*[3], **{'dtype': None})\ny = [*x, *range(2)]\nz = {**{}, 'a': 1}\n",
    "a, *b = [1, 2]\n*c, d = 1, 2\nfor e, *f in [[1]]:\n    pass\ng = [h for *h, i in [[1]]]\n",
    "def f(a, b=2, *, c=3):\n    return a + b + c\n",
    "f = lambda x, y=1: x * y\n",
    "for i in [1, 2]:\n    if i:\n        continue\n    break\nelse:\n    pass\n",
    "while False:\n    pass\n",
    "x = [i for i in [1] if i]\ny = {i: i for i in [1]}\nz = list(i for i in [1])\n",
    "x = 1\nprint(f'{x!r:>{x}} {x:.3f}')\n",
    "x = {1: 2, 'a': [3]}\n",
    "if 1:\n    pass\nelif 2:\n    pass\nelse:\n    pass\n",
    "x = 1 if 2 else 3\n",
    "assert 1, 'message'\n",
    "x = 1 and 2 or not 3\n",
    "x = 1 < 2 < 3\ny = 1 is None\nz = 1 in [1] and 2 not in [1] and x is not y\n",
    "_, x = 1, 2\nfor _ in [1]:\n    pass\n",
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    "import torch.optim as optim\nfrom torch import nn\nimport math\n"
    "from torch.nn import functional as F\nimport torch.nn\n",
    "for i, (a, b) in enumerate(zip([1], [2])):\n    pass\n",
    "x = [1]\nx[0] = 2\nd = {}\nd['k'] = [1]\nd['k'][0] += 1\n",
    "x = {1, 2}\ny = {i for i in [1]}\nz = set('ab') | {3} & {4} ^ {5}\nm = 6 & 3 | 1\n",
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_constructs_the_language_grew_are_accepted(source):
    parse(source, known_names=RESERVED_NAMES)


def test_operator_refusal_has_a_position():
    # Operator nodes (ast.LShift) carry no position themselves; the error uses the BinOp's.
    err = refuse("x = 1\ny = (x << 2)\n")
    assert err.kind == "forbidden"
    assert "hift operators are not part" in err.message
    assert (err.line, err.col) == (2, 6)


@pytest.mark.parametrize(
    "source",
    [
        "x = torch.ones(3)\ny = x.＿＿class＿＿\n",  # fullwidth low lines: not an identifier start
        "x = torch.ones(3)\ny = x._＿class＿＿\n",  # NFKC-normalised to __class__ by the parser
        "x = torch.ones(3)\ny = x.__ｃｌａｓｓ__\n",
        "＿＿import＿＿('os')\n",
    ],
)
def test_unicode_lookalike_dunders_are_refused(source):
    err = refuse(source)
    assert err.kind in ("forbidden", "syntax")
    assert err.line == 2 or source.startswith("＿")


def test_nfkc_normalised_dunder_is_seen_by_the_checker():
    err = refuse("x = torch.ones(3)\ny = x._＿class＿＿\n")
    assert err.kind == "forbidden"
    assert "__class__" in err.message
    assert (err.line, err.col) == (2, 5)


def test_nfkc_normalised_builtin_name_cannot_be_reassigned():
    err = refuse("ｔｏｒｃｈ = 1\n")
    assert err.kind == "forbidden"
    assert "torch" in err.message


def test_column_counts_characters_not_bytes():
    # 'é' and 'ö' are two bytes each in UTF-8; the column counts characters.
    err = refuse("s = 'héllo wörld'; y = x.__dict__\n")
    assert (err.line, err.col) == (1, 24)
    err = refuse("a = 1\n# ünïcödé\nb = 'ééé'; c = 1 << 2\n")  # a shift: still refused
    assert (err.line, err.col) == (3, 16)


def test_syntax_error_line_and_col():
    err = refuse("x = torch.ones(3)\ny = x +\n")
    assert err.kind == "syntax"
    assert (err.line, err.col) == (2, 8)
    err = refuse("s = 'éé'; x = 1 +\n")
    assert err.kind == "syntax"
    assert (err.line, err.col) == (1, 18)


def test_syntax_error_unclosed_bracket():
    err = refuse("x = (1,\ny = 2\n")
    assert err.kind == "syntax"
    assert err.line == 1
    assert err.col == 5


def test_unexpected_indent_has_hint():
    err = refuse("x = 1\n    y = 2\n")
    assert err.kind == "syntax"
    assert err.line == 2
    assert "first column" in err.hint


# ---------------------------------------------------------------- caps


def test_source_length_cap():
    err = refuse("#" * 50_001)
    assert err.kind == "limit"
    assert "50,000" in err.message
    err = refuse("x = 1\n" * 10, Limits(max_source_chars=20))
    assert err.kind == "limit"


def test_line_count_cap():
    err = refuse("x = 1\n" * 1_001)
    assert err.kind == "limit"
    assert "1,000" in err.message
    parse("x = 1\n" * 999, known_names=RESERVED_NAMES)  # under the cap


def test_deep_brackets_refused_before_parsing():
    err = refuse("x = " + "(" * 100 + "1" + ")" * 100 + "\n")
    assert err.kind == "limit"
    assert (err.line, err.col) == (1, 35)  # the 31st bracket
    err = refuse("x = " + "[" * 5_000 + "]" * 5_000 + "\n")
    assert err.kind == "limit"


def test_brackets_in_strings_and_comments_do_not_count():
    parse("x = '" + "(" * 40 + "'\n", known_names=RESERVED_NAMES)
    parse("x = 1  # " + "(" * 40 + "\n", known_names=RESERVED_NAMES)


@pytest.mark.parametrize("terms", [2_000, 20_000, 200_000])
def test_long_operator_chain_refused_without_recursion_error(terms):
    source = "x = " + "+".join(["1"] * terms) + "\n"
    err = refuse(source, Limits(max_source_chars=10**6))  # reach the parser, not the length cap
    assert err.kind == "limit"
    assert err.line == 1
    # And with the default caps, the 200,000-term version is refused on length.
    if terms == 200_000:
        assert refuse(source).kind == "limit"


def test_deep_unary_and_attribute_chains():
    assert refuse("x = " + "-" * 5_000 + "1\n", Limits(max_source_chars=10**6)).kind == "limit"
    assert refuse("x = " + "-" * 150 + "1\n").kind == "limit"
    assert refuse("x = torch" + ".t()" * 3_000 + "\n").kind == "limit"
    err = refuse("x = y" + "[0]" * 150 + "\n")
    assert err.kind == "limit"
    assert (err.line, err.col) == (1, 5)


def test_ast_node_cap():
    source = "x = [" + ", ".join(["1"] * 200) + "]\n"
    err = refuse(source, Limits(max_ast_nodes=100))
    assert err.kind == "limit"
    assert "100" in err.message


def test_long_string_literal():
    """A literal is held to the longest string a program may make, not to a cap of its own:
    tutorials open with docstrings of hundreds of characters."""
    err = refuse("s = '" + "a" * 10_001 + "'\n", PUBLIC_PROGRAM_LIMITS)
    assert err.kind == "limit"
    assert (err.line, err.col) == (1, 5)
    assert "10,000" in err.message
    parse("s = '" + "a" * 10_000 + "'\n", PUBLIC_PROGRAM_LIMITS, known_names=RESERVED_NAMES)


def test_a_long_docstring_runs():
    doc = "A configuration of the model. " * 20  # 600 characters, as tutorials' files open
    source = f'"""{doc}"""\nclass Net(nn.Module):\n    """{doc}"""\n\n    def __init__(self):\n'
    source += "        super().__init__()\n        self.fc = nn.Linear(2, 1)\n\n"
    source += "    def forward(self, x):\n        return self.fc(x)\n\n"
    source += "y = Net()(torch.ones(1, 2)).sum()\n"
    trace = run_program(source)
    assert trace.error is None, trace.error
    assert any(t.name == "y" for t in trace.tensors)


def test_huge_int_literal():
    err = refuse("x = 2 ** " + "9" * 1_300 + "\n")
    assert err.kind == "limit"
    assert (err.line, err.col) == (1, 10)
    assert "bits" in err.message


def test_list_literal_size():
    err = refuse("x = [" + ",".join(["1"] * 10_001) + "]\n")
    assert err.kind == "limit"
    assert "10,001" in err.message
    assert (err.line, err.col) == (1, 5)


@pytest.mark.parametrize("source", ["", "   \n\n", "\n\t\n"])
def test_empty_program(source):
    err = refuse(source)
    assert err.kind == "syntax"
    assert "empty" in err.message
    assert err.line == 1


def test_comment_only_program_is_allowed():
    tree = parse("# nothing yet\n", known_names=RESERVED_NAMES)
    assert tree.body == []


@pytest.mark.parametrize("source", [None, b"x = 1", 42, ["x = 1"]])
def test_non_str_input(source):
    err = refuse(source)
    assert err.kind == "type"
    assert type(source).__name__ in err.message


def test_nul_byte():
    err = refuse("x = 1\ny = 2\x00\n")
    assert err.kind == "syntax"
    assert "NUL" in err.message
    assert (err.line, err.col) == (2, 6)


def test_allowed_program_parses():
    tree = parse(
        "x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)\n"
        "a, b = x[0], x[1:]\n"
        "x.grad = None\n"
        "y = (x ** 2 + -x @ x) / 2 % 3 // 1\n"
        "with torch.no_grad():\n"
        "    z = x * 2\n"
        "print(x.shape, y >= 0)\n"
        "pass\n",
        known_names=RESERVED_NAMES,
    )
    assert isinstance(tree, ast.Module)
    assert len(tree.body) == 7


def test_error_to_dict_and_str():
    err = refuse("import os\n")
    d = err.report().to_dict()
    assert set(d) == {"kind", "message", "line", "col", "hint", "details"}
    assert str(err).startswith("line 1, col 1: ")


# ---------------------------------------------------------------- helpers


def test_char_col():
    lines = ["héllo = x"]
    assert char_col(lines, 1, len("héllo = ".encode())) == 9
    assert char_col(lines, None, 3) is None
    assert char_col(lines, 5, 3) == 4  # out of range: best effort


def test_did_you_mean_and_fmt_bytes():
    assert did_you_mean("onse", ["ones", "zeros"]) == "Did you mean `ones`?"
    assert did_you_mean("qqqq", ["ones"]) is None
    assert fmt_bytes(40e9) == "40 GB"
    assert fmt_bytes(1.5e6) == "1.5 MB"
    assert fmt_bytes(12) == "12 bytes"


_EVERY_SHAPE = """
import torch.nn as nn
from math import pi
class Net(nn.Module):
    def __init__(self, n=3, *, k=1):
        super().__init__()
        self.fc = nn.Linear(n, k)
    def forward(self, x):
        return self.fc(x) if x.sum() > 0 else -x
def f(a, b=2):
    for i, j in zip(range(3), [1, 2, 3]):
        if i == 1:
            continue
        elif i > 5 or not j:
            break
    else:
        pass
    while a < 3:
        a += 1
    return [k * 2 for k in range(a) if k], {k: v for k, v in {}.items()}, (n for n in [1])
with torch.no_grad():
    t = torch.ones(2, 3)[0, 1:2:1]
assert f(1)[0] is not None, f"x {pi:.2f} {t!r}"
g = lambda z, *q: z @ z
x, (y, w) = 1, (2.5, "s")
t.grad = None
d = {"a": [1, -2], **{}}
"""


def test_child_nodes_are_ast_iter_child_nodes_in_the_same_order():
    from gradviz.program.presets import PRESETS
    from gradviz.program.syntax.grammar import child_nodes

    sources = [_EVERY_SHAPE] + [p.source for p in PRESETS] + [row[0] for row in FORBIDDEN]
    walked = 0
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            assert child_nodes(node) == list(ast.iter_child_nodes(node)), ast.dump(node)
            walked += 1
    assert walked > 2_000
    # a field left unset (a node made by hand) is skipped, as ast.iter_fields skips it
    bare = ast.Name(id="x")
    assert child_nodes(bare) == list(ast.iter_child_nodes(bare)) == []
    call = ast.Call(func=ast.Name(id="f", ctx=ast.Load()), args=[ast.Constant(1), "odd"])
    assert child_nodes(call) == list(ast.iter_child_nodes(call))


_BLOCKS_AND_DECLARATIONS = """
import math
def outer(a):
    from math import pi
    global g
    n = 0
    def inner():
        nonlocal n
        import torch.nn as nn
        n += 1
    for i in range(3):
        if i:
            with torch.no_grad():
                import torch
        else:
            while False:
                pass
            else:
                global h
    try:
        import random
    except ValueError as e:
        from math import e as ee
    else:
        pass
    finally:
        lam = lambda: [x for x in range(2)]
    return inner
class A:
    import math as m2
    def f(self):
        global k
"""


def test_statements_are_every_statement_in_source_order():
    """grammar.statements walks only the blocks statements stand in: the same statements
    as ast.walk's, in the order of the source; a function's own declarations (declared)
    are those of its own statements, not of the functions inside it."""
    from gradviz.program.presets import PRESETS
    from gradviz.program.syntax.grammar import statements
    from gradviz.program.syntax.scope_rules import declared

    sources = [_EVERY_SHAPE, _BLOCKS_AND_DECLARATIONS] + [p.source for p in PRESETS]
    sources += [row[0] for row in FORBIDDEN]
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        found = statements(tree)
        walked = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
        assert {id(n) for n in found} == {id(n) for n in walked}
        assert len(found) == len(walked)
        places = [(n.lineno, n.col_offset) for n in found]
        assert places == sorted(places)
    tree = ast.parse(_BLOCKS_AND_DECLARATIONS)
    outer = tree.body[1]
    inner = outer.body[3]
    assert declared(outer.body) == {"g": "global", "h": "global"}
    assert declared(inner.body) == {"n": "nonlocal"}
    assert declared(tree.body[2].body[1].body) == {"k": "global"}


_SUPERS = """
class A(nn.Module):
    def __init__(self, n=super):
        super().__init__()
        self.a = nn.Linear(2, 2)
        def inner(self):
            self.b = super().forward(1)
            return lambda: super().odd()
        self.c, self.d = 1, 2
        super(A, self).describe(super().x(), k=super(keyword=1).y())
    def forward(self, x):
        return super().forward(super().__init__(x)) + self.a(x)
"""


def test_a_method_is_read_in_one_walk():
    """ClassRules.read_method finds the `super()` calls grammar.super_method_calls finds,
    in its order, each with its `super().name`, and the `self.name` targets a walk of the
    whole method finds."""
    from gradviz.program.presets import PRESETS
    from gradviz.program.syntax.class_rules import ClassRules
    from gradviz.program.syntax.grammar import dotted, super_method_calls
    from tests.security.corpus import HOSTILE

    methods = 0
    sources = [_SUPERS] + [p.source for p in PRESETS]
    sources += [row[1] for row in HOSTILE if "class " in row[1] and len(row[1]) < 10_000]
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            for method in [m for m in cls.body if isinstance(m, ast.FunctionDef)]:
                me = method.args.args[0].arg if method.args.args else "self"
                rules = ClassRules()
                rules.self_targets = set()
                found = rules.read_method(method, me)
                calls = super_method_calls(method)
                assert [c for c, _ in found] == calls
                assert all(a.value is c for c, a in found)
                targets = {
                    id(t)
                    for n in ast.walk(method)
                    if isinstance(n, ast.Assign)
                    for t in n.targets
                    if isinstance(t, ast.Attribute) and dotted(t.value) == me
                }
                assert rules.self_targets == targets
                methods += 1
    assert methods > 20


def _old_bracket_check(source: str, max_nesting: int) -> tuple[int, int] | None:
    """The bracket check as it was, character by character: (line, col) of its refusal."""
    depth = 0
    line, col = 1, 0
    quote = None
    for i, ch in enumerate(source):
        if ch == "\n":
            line, col, quote = line + 1, 0, None
            continue
        col += 1
        if quote:
            if ch == quote and source[i - 1] != "\\":
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "#":
            quote = "\n"
        elif ch in "([{":
            depth += 1
            if depth > max_nesting:
                return line, col
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return None


@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")
def test_bracket_check_refuses_where_the_character_walk_did():
    import random

    rng = random.Random(16)
    alphabet = ["(", "[", "{", ")", "]", "}", "'", '"', "#", "\\", "\n", " ", "x", "é", "\r"]
    limits = Limits(max_nesting=3)
    refused = 0
    for _ in range(4_000):
        source = "x = " + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        want = _old_bracket_check(source, 3)
        try:
            parse(source, limits)
            got = None
        except ProgramError as err:
            got = (err.line, err.col) if "brackets are nested" in err.message else None
        assert got == want, repr(source)
        refused += want is not None
    assert refused > 300


def test_source_segment_counts_offsets_in_utf8_bytes_on_any_line():
    from gradviz.program.syntax.program_error import source_segment

    source = 'x = torch.ones(3)\ns = "é→" + "abc"\ny = (x * 2).sum()  # ü\n'
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if not hasattr(node, "lineno") or node.end_lineno != node.lineno:
            continue
        raw = lines[node.lineno - 1].encode("utf-8")
        want = raw[node.col_offset : node.end_col_offset].decode("utf-8", errors="replace")
        assert source_segment(lines, node, 200) == want.strip()
    assert source_segment(lines, ast.parse(source).body[1].value.right) == '"abc"'
