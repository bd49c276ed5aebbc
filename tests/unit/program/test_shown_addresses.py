"""Objects whose repr shows an address in Python (numpy's Generator, torch.Generator) print
in Python's form with an address the run makes up: the same on every run, numbered in the
order the objects are first shown, never the worker's memory address."""

from __future__ import annotations

import re

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.same_as_python import printed, python_printed

PROGRAM = """\
import numpy as np
rng = np.random.default_rng(0)
other = np.random.default_rng(1)
g = torch.Generator().manual_seed(3)
print(rng)
print(str(rng), f"{rng}", "%s" % rng)
print(repr(rng), [rng], f"{rng!r}", "%r" % rng)
print([other, rng], (g,))
print(g, repr(g), [g], f"{g}")
print(rng.integers(0, 10, 3), torch.rand(2, generator=g))
"""


def addresses_hidden(lines: list[str]) -> list[str]:
    return [re.sub(r"0x[0-9a-fA-F]+", "0x…", line) for line in lines]


def test_generators_print_in_pythons_form():
    ours = printed(PROGRAM)
    assert addresses_hidden(ours) == addresses_hidden(python_printed(PROGRAM))
    assert ours[0] == "Generator(PCG64)"
    assert ours[2].startswith("Generator(PCG64) at 0x7F2000000040 [Generator(PCG64) at 0x7F2")


def test_addresses_are_the_runs_own_and_the_same_on_every_run():
    first, again = printed(PROGRAM), printed(PROGRAM)
    assert first == again
    shown = set(re.findall(r"0x[0-9a-fA-F]+", "\n".join(first)))
    assert {int(a, 16) for a in shown} == {0x7F2000000040, 0x7F2000000080, 0x7F20000000C0}
    trace = run_program("import numpy as np\nprint([np.random.default_rng(0)])", RunOptions())
    assert trace.stdout == ["[Generator(PCG64) at 0x7F2000000040]"]
