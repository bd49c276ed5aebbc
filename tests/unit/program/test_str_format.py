"""`str.format`: what CPython prints for the same program, its errors in Python's words, the
string caps on widths, and no attribute read in a field (`{0.__class__}`)."""

from __future__ import annotations

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.same_as_python import printed, python_printed, refused


def python_error(source: str) -> str:
    with pytest.raises(Exception) as info:  # noqa: PT011 - any of Python's errors
        python_printed(source)
    return f"{type(info.value).__name__}: {info.value}"


SAME_AS_PYTHON = [
    "print('{} + {} = {}'.format(1, 2, 3))\nprint('{0}{1}{0}'.format('a', 'b'))\n",
    "print('{name}: {v:.3f}'.format(name='loss', v=0.12345))\n"
    "print('[{:d}, {:5d}] loss: {:.3f}'.format(1, 2000, 0.5))\n",
    "print('{:>{w}}|{:^7}|{:<4}|'.format('x', 'mid', 'l', w=5))\n",
    "print('{0[1]} {d[k]} {d[2]} {t[0]}'.format([1, 2], d={'k': 'v', 2: 'two'}, t=(7,)))\n",
    "print('{!r} {!s:>4} {!a}'.format('a', 1, 'é'))\nprint('{{}} {{{}}}'.format(3))\n",
    "x = torch.tensor(1.5)\nprint('{} {:.2f}'.format(x, x))\nprint('{}'.format([1, 'a']))\n",
    "epoch, loss = 3, 0.25\nmsg = 'epoch {epoch}: {loss:.4f}'.format(**{'epoch': epoch, 'loss': loss})\n"
    "print(msg)\nprint('{}-{}'.format(*'ab'))\n",
    "template = '{:,} items, {:.1%} done, {:08.3f}, {:+d}, {:x}'\n"
    "print(template.format(1234567, 0.256, 3.14159, 5, 255))\n",
]


@pytest.mark.parametrize("source", SAME_AS_PYTHON)
def test_prints_what_python_prints(source):
    assert printed(source) == python_printed(source)


ERRORS_AS_PYTHON = [
    "print('{}{1}'.format(1, 2))\n",
    "print('{1}{}'.format(1, 2))\n",
    "print('{2}'.format(1, 2))\n",
    "print('{k}'.format(a=1))\n",
    "print('{'.format(1))\n",
    "print('}'.format(1))\n",
    "print('{!x}'.format(1))\n",
    "print('{0[a]}'.format([1]))\n",
    "print('{0[3]}'.format([1]))\n",
    "print('{0[k]}'.format({}))\n",
    "print('{:{:{}}}'.format(1, 2, 3))\n",
    "print('{:d}'.format('a'))\n",
    "s = '{' + '9' * 5000 + '}'\nprint(s.format(1))\n",
    "s = '{0[' + '9' * 5000 + ']}'\nprint(s.format([1]))\n",
    "print('{0[99999999999999999999999]}'.format([1]))\n",
]


@pytest.mark.parametrize("source", ERRORS_AS_PYTHON)
def test_errors_in_python_words(source):
    line = source.count("\n")
    refused(source, "runtime", line, 7, python_error(source))


def test_a_field_reads_no_attributes():
    x = "x = torch.ones(1, requires_grad=True)\n"
    for field in ("{0.__class__}", "{0.grad}", "{.real}", "{x.__globals__}", "{0[0].__class__}"):
        source = f"{x}s = '{field}'.format([x], x=x)\n"
        refused(source, "forbidden", 2, 5, "reads no attributes", field)


def test_a_field_indexes_only_the_programs_lists_tuples_and_dicts():
    refused("print('{0[0]}'.format(torch.ones(2)))\n", "type", 1, 7, "lists, tuples and dicts")
    refused("print('{0[0]}'.format('ab'))\n", "type", 1, 7, "not a str")


def test_widths_and_output_meet_the_string_caps():
    refused("print('{:1000000000}'.format(1))\n", "limit", 1, 7, "format width")
    refused("print('{:{}}'.format(1, 10**9))\n", "limit", 1, 7, "format width")
    refused("s = 'a' * 60000\nt = '{}{}'.format(s, s)\n", "limit", 2, 5, "characters")


def test_what_a_program_made_is_quoted_short_in_errors():
    for source in (
        "print('{:{}}'.format(1, '<' * 10**5))\n",
        "print(('{0[' + 'a' * 90000 + ']}').format({}))\n",
        "print(('{' + 'a' * 90000 + '}').format())\n",
        "print(**{'_' + 'a' * 90000: 1})\n",
        "print(**{'a b' * 30000: 1})\n",
        "f = lambda **k: 1\nf(**{'a' * 90000: 1}, **{'a' * 90000: 1})\n",
        "d = {}\ndel d['a' * 90000]\n",
    ):
        err = run_program(source, RunOptions(simulate_cuda=False)).error
        assert err is not None and len(err.message) < 200, (source, err)
