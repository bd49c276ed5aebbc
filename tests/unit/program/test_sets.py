"""Sets: `{...}`, `set(...)`, set comprehensions, their methods and operators, `in`, `len`,
`sorted` and printing, as Python does them (makemore's and the GPT lecture's vocabulary is
`sorted(list(set(text)))`; 17 of 29 copied tutorials stopped at `set`). Items are held and
hashed as in Python, and sized by the same quotas as lists; `&`, `|` and `^` also work on
numbers and boolean tensors (masks)."""

from __future__ import annotations

import pytest
from test_tutorials import same_as_python

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

VOCABULARY = """\
words = ["emma", "olivia", "ava", "isabella", "sophia"]
chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
print(len(chars), chars)
print(stoi['a'], itos[1])
text = "hello world"
vocab = sorted(set(text))
print(vocab, len(set(text)))
"""

SET_OPERATIONS = """\
a = {3, 1, 2}
b = set([3, 4])
print(sorted(a | b), sorted(a & b), sorted(a - b), sorted(a ^ b), set(), len(a))
a.add(9)
a.update([10, 11], (12,))
a.discard(1)
a.discard(100)
a.remove(2)
print(sorted(a), 3 in a, 5 not in a, a.issubset(set(range(20))), a.isdisjoint({50}))
print(sorted(a.union([0])), sorted(a.intersection({3, 9})), sorted(a.difference({3})))
c = a.copy()
c.clear()
print(c, a == {3, 9, 10, 11, 12}, isinstance(a, set), {1} == {1})
pairs = {(1, 2), (1, 2), (3, 4)}
lengths = {len(w) for w in ["ab", "cd", "efg"]}
print(len(pairs), sorted(lengths), {5})
for x in sorted({3, 1, 2}):
    print(x)
print(6 & 3, 6 | 3, 6 ^ 3, True | False)
m = torch.tensor([True, False, True]) & torch.tensor([True, True, False])
print(m, torch.tensor([1, 2]) | torch.tensor([4, 4]))
"""


@pytest.mark.parametrize("source", [VOCABULARY, SET_OPERATIONS], ids=["vocabulary", "operations"])
def test_sets_print_what_python_prints(source):
    same_as_python(source)


def run(source: str):
    return run_program(source, RunOptions(classic=False))


@pytest.mark.parametrize(
    ("source", "kind", "line", "words"),
    [
        ("s = {[1, 2]}", "runtime", 1, "unhashable type: 'list'"),
        ("s = set([[1]])", "runtime", 1, "unhashable type: 'list'"),
        ("s = {1}\ns.add([2])", "runtime", 2, "unhashable type: 'list'"),
        ("s = {1}\ns.remove(5)", "runtime", 2, "KeyError"),
        ("s = {print}", "type", 1, "cannot hold"),
        ("s = {1, 2}\nt = s + s", "type", 2, "not on a set"),
        ("s = set(range(10**9))", "limit", 1, "loop passes"),
        ("s = {1}\ns.update(range(10**8))", "limit", 2, "items per list, tuple, dict or set"),
        ("s = {1}\ns.pop(1)", "type", 2, "takes no arguments"),
        ("s = {1}\ns.sort()", "type", 2, "no method `.sort`"),
        ("x = 1.5 | 2", "runtime", 1, "unsupported operand"),
        ("s = {1}\nt = s.__class__", "forbidden", 2, "underscore"),
    ],
)
def test_what_python_refuses_and_the_caps_are_errors_at_their_line(source, kind, line, words):
    err = run(source).error
    assert err is not None and err.kind == kind, err
    assert err.line == line and words in err.message, err


def test_a_set_of_every_number_a_loop_makes_is_held_to_the_item_quota():
    source = "s = set()\nfor i in range(150000):\n    s.add(i)\n"
    err = run(source).error
    assert err is not None and err.kind == "limit" and err.line == 3, err


def test_tensors_in_sets_are_kept_by_identity():
    trace = run(
        "a = torch.ones(2)\nb = torch.ones(2)\ns = {a, b, a}\n"
        "print(len(s), a in s, torch.zeros(2) in s)\n"
    )
    assert trace.error is None, trace.error
    assert trace.stdout == ["2 True False"]
