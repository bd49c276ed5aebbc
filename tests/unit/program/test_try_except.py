"""`try` / `except` / `else` / `finally`: the program prints what Python prints for the same
source, and the run's caps, the language's refusals and its own errors are never caught."""

from __future__ import annotations

import tracemalloc

import pytest
from test_tutorials import python_run, same_as_python

from gradviz.program.interpreter.control import exception_of
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import Limits
from gradviz.program.results.reports import ErrorDetails
from gradviz.program.results.trace import RunOptions
from gradviz.program.syntax.program_error import ProgramError

SAME_AS_PYTHON = {
    "handler-and-finally": """\
try:
    x = 1 / 0
except ZeroDivisionError as e:
    print("caught", e, repr(e))
else:
    print("no error")
finally:
    print("finally")
print("after")
""",
    "else-runs-without-error": """\
try:
    x = 2
except ValueError:
    print("never")
else:
    print("else", x)
finally:
    print("finally")
""",
    "tuple-of-types-and-key-error": """\
d = {"a": 1}
try:
    d["k"]
except (TypeError, KeyError) as e:
    print(e, repr(e), f"{e}|{e!r}", str(e))
""",
    "bare-except-and-exception": """\
items = [1, 2]
try:
    items[5]
except:
    print("bare")
try:
    int("x")
except Exception as e:
    print("Exception:", e)
""",
    "first-matching-handler": """\
for bad in ["v", "t", "k", "z"]:
    try:
        if bad == "v":
            raise ValueError("v!")
        if bad == "t":
            raise TypeError("t", 2)
        if bad == "k":
            raise KeyError(bad)
        1 // 0
    except ValueError as e:
        print("value", e)
    except (TypeError, KeyError) as e:
        print("type or key", e, repr(e))
    except Exception as e:
        print("other", e)
""",
    "nested-try": """\
def risky(n):
    try:
        try:
            if n == 0:
                raise ValueError("zero")
            return 10 // (n - 1)
        except ValueError as e:
            print("inner", e)
            raise
        finally:
            print("inner finally", n)
    except ZeroDivisionError as e:
        print("outer", e)
        return -1
    except ValueError:
        print("outer value")
        return -2
    finally:
        print("outer finally", n)

for n in range(3):
    print(risky(n))
""",
    "finally-with-return-break-continue": """\
def f(k):
    for i in range(4):
        try:
            if i == 1:
                continue
            if i == k:
                return i
            if i == 3:
                break
            print("body", i)
        finally:
            print("finally", i)
    print("after loop")
    return None

print(f(2))
print(f(9))
""",
    "return-in-finally-wins": """\
def g():
    try:
        raise ValueError("lost")
    finally:
        return "finally wins"

def h():
    try:
        return "body"
    finally:
        print("cleanup")

print(g())
print(h())
""",
    "reraise-and-own-function": """\
def check(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x * 2

total = 0
for x in [1, -2, 3]:
    try:
        total += check(x)
    except ValueError as e:
        print("skipped", e)
print(total)
try:
    try:
        check(-5)
    except ValueError:
        print("again")
        raise
except ValueError as e:
    print("outer got", e)
""",
    "handler-error-goes-out-through-finally": """\
def f():
    try:
        try:
            1 / 0
        except ZeroDivisionError:
            {}["missing"]
        finally:
            print("inner finally")
    except KeyError as e:
        print("key", e)
f()
""",
    "assert-and-not-implemented": """\
try:
    assert 1 > 2
except AssertionError as e:
    print("assert", repr(e), str(e) == "")
try:
    assert False, "why"
except AssertionError as e:
    print(e, repr(e))
try:
    raise NotImplementedError("later")
except RuntimeError as e:
    print("runtime catches", repr(e))
try:
    raise ValueError
except ValueError as e:
    print(repr(e), str(e) == "")
""",
    "stop-iteration-and-overflow": """\
import math
try:
    raise StopIteration
except StopIteration:
    print("exhausted")
try:
    math.exp(1000)
except Exception as e:
    print("overflow:", e)
""",
}


@pytest.mark.parametrize("source", SAME_AS_PYTHON.values(), ids=SAME_AS_PYTHON.keys())
def test_prints_what_python_prints(source):
    same_as_python(source)


def test_a_torch_shape_error_is_a_runtime_error_to_catch():
    source = """\
a = torch.ones(2, 3)
b = torch.ones(2, 3)
try:
    c = a @ b
except RuntimeError as e:
    print("shape:", e)
    c = a @ b.T
print(c.shape)
try:
    torch.ones(3) + torch.ones(4)
except Exception as e:
    print("broadcast:", e)
"""
    trace = same_as_python(source)
    assert trace.stdout[0].startswith("shape: mat1 and mat2 shapes cannot be multiplied")


LAYERS_AND_AUTOGRAD = """\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            self.fc = nn.Linear(4, 2)
        except Exception:
            self.fc = None
    def forward(self, x):
        try:
            return self.fc(x)
        except RuntimeError as e:
            print("forward failed:", e)
            return None
net = Net()
print(net(torch.ones(3, 5)))
y = net(torch.ones(3, 4))
print(y.shape)
layer = nn.Linear(3, 2)
try:
    layer(torch.ones(2, 5))
except RuntimeError as e:
    print("layer:", e)
seq = nn.Sequential(nn.Linear(2, 2))
try:
    seq[3]
except IndexError as e:
    print("seq:", e)
x = torch.ones(2, requires_grad=True)
z = (x * 2).sum()
z.backward()
try:
    z.backward()
except RuntimeError as e:
    print("twice:", str(e)[:40])
print(x.grad)
"""


def test_errors_of_layers_modules_and_backward_are_caught_as_in_python():
    """In a module's __init__ and forward, a layer's call, a Sequential's index and a
    second backward(): the run goes on, and its graph is still built."""
    trace = same_as_python(LAYERS_AND_AUTOGRAD)
    assert trace.stdout[0].startswith("forward failed: mat1 and mat2 shapes")


def run(source: str, **options):
    options.setdefault("classic", False)
    return run_program(source, RunOptions(**options))


def test_an_uncaught_error_shows_at_the_line_that_raised_it():
    source = "def f():\n    raise ValueError('deep')\ntry:\n    f()\nexcept KeyError:\n    pass\n"
    err = run(source).error
    assert (err.kind, err.line, err.col, err.message) == ("runtime", 2, 5, "ValueError: deep")
    source = "try:\n    x = [1][3]\nexcept IndexError:\n    raise\n"
    err = run(source).error
    assert (err.kind, err.line, err.message) == ("runtime", 2, "list index out of range")
    assert err.details.exception == "IndexError"
    printed, _ = python_run("try:\n    x = [1][3]\nexcept IndexError as e:\n    print(e)\n")
    assert printed == ["list index out of range"]


@pytest.mark.parametrize(
    ("source", "kind", "line", "words"),
    [
        # the run's caps: loops, steps, memory, sizes, call depth, strings
        ("n = 0\nwhile True:\n    try:\n        n += 1\n    except:\n        pass\n",
         "limit", 2, "loop iterations"),
        ("xs = []\ntry:\n    while True:\n        xs.append(torch.ones(1000, 1000))\n"
         "except Exception:\n    print('kept going')\n", "limit", 4, ""),
        ("try:\n    x = torch.ones(100000, 100000)\nexcept Exception:\n    x = 1\n",
         "limit", 2, "allocate"),
        ("def f(n):\n    try:\n        return f(n + 1)\n    except:\n        return n\nprint(f(0))\n",
         "limit", 3, "call depth"),
        ("try:\n    s = 'x' * 10**9\nexcept Exception:\n    s = ''\n", "limit", 2, "characters"),
        # a finally that never ends: only a catchable error runs it, and the caps stop it
        ("try:\n    raise ValueError('x')\nfinally:\n    while True:\n        pass\n",
         "limit", 4, "loop iterations"),
        ("try:\n    while True:\n        pass\nfinally:\n    print('never')\n",
         "limit", 2, "loop iterations"),
        # the language's refusals and its own errors
        ("try:\n    y = undefined\nexcept Exception:\n    y = 0\n", "name", 2, "not defined"),
        ("try:\n    y = torch.ones(2).foo()\nexcept:\n    y = 0\n", "name", 2, ""),
        ("try:\n    pass\nexcept BaseException:\n    pass\n", "forbidden", 3, "except"),
        ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__\n",
         "forbidden", 4, "underscore"),
        ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.with_traceback(None)\n",
         "type", 4, "with_traceback"),
        ("raise\n", "syntax", 1, "bare `raise`"),
        ("try:\n    1 / 0\nexcept* ZeroDivisionError:\n    pass\n", "forbidden", 1, "except*"),
    ],
)  # fmt: skip
def test_caps_refusals_and_own_errors_are_never_caught(source, kind, line, words):
    trace = run(source)
    err = trace.error
    assert err is not None and err.kind == kind, err
    assert err.line == line and err.col is not None, err
    assert words in err.message
    assert "kept going" not in trace.stdout and "never" not in trace.stdout


def test_the_time_cap_ends_a_finally_that_would_run_on():
    source = """\
import time
try:
    while True:
        time.sleep(0.05)
except Exception:
    print("caught")
finally:
    while True:
        time.sleep(0.05)
"""
    trace = run(source, limits=Limits(max_seconds=0.3))
    err = trace.error
    assert (err.kind, err.line) == ("limit", 3) and "seconds" in err.message
    assert trace.stdout == []


def test_the_exception_variable_is_local_to_a_function():
    trace = run(
        "e = 'outer'\ndef f():\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n"
        "        return str(e)\nprint(f(), e)\n"
    )
    assert trace.error is None and trace.stdout == ["division by zero outer"]


def test_the_exception_variable_is_unbound_after_its_block():
    source = "try:\n    raise ValueError('a')\nexcept ValueError as e:\n    print(e)\nprint(e)\n"
    trace = run(source)
    assert trace.stdout == ["a"]
    assert (trace.error.kind, trace.error.line) == ("name", 5)
    with pytest.raises(NameError):
        python_run(source)


@pytest.mark.parametrize(
    ("message", "exception"),
    [
        ("DefaultCPUAllocator: can't allocate memory: you tried to allocate 400000000 bytes.",
         "RuntimeError"),
        ("[enforce fail at alloc_cpu.cpp:117] std::bad_alloc", "RuntimeError"),
        ("could not create a primitive", "RuntimeError"),
        ("CUDA out of memory. Tried to allocate 2.00 GiB", "OutOfMemoryError"),
        ("CUDA error: device-side assert triggered", "RuntimeError"),
        ("CUDA error: an illegal memory access was encountered", "AcceleratorError"),
        ("maximum recursion depth exceeded", "RecursionError"),
    ],
)  # fmt: skip
def test_the_workers_memory_wall_and_the_devices_failures_are_never_caught(message, exception):
    """torch says RuntimeError when the worker's memory cap (RLIMIT_DATA) makes its
    allocator fail, and when the GPU itself fails: caps and broken devices, not the
    program's errors."""
    err = ProgramError("runtime", message, 1, 1, details=ErrorDetails(exception=exception))
    assert exception_of(err) is None


def test_what_a_program_may_catch():
    runtime = ErrorDetails(exception="RuntimeError")
    assert exception_of(ProgramError("runtime", "mat1 and mat2 shapes", details=runtime))
    assert exception_of(ProgramError("runtime", "KeyError: 'k'")) == "KeyError"
    assert exception_of(ProgramError("runtime", "list index out of range")) is None
    own = run(
        "try:\n    raise RuntimeError('CUDA error: out of memory')\nexcept Exception as e:\n"
        "    print(e)\n"
    )
    assert own.error is None and own.stdout == ["CUDA error: out of memory"]
    for kind in ("limit", "forbidden", "syntax", "name", "type", "internal"):
        assert exception_of(ProgramError(kind, "ValueError: x", details=runtime)) is None


def test_raising_the_same_error_again_and_again_holds_no_more_memory():
    """Python adds the frames an exception passes through to its traceback each time it
    is raised: a bare `raise` re-raising one error in a loop grew it without end (300 MB
    for 150,000 passes), outside every cap. A re-raise starts a fresh traceback."""
    source = (
        "try:\n    1 / 0\nexcept ZeroDivisionError:\n    for i in range(30000):\n"
        "        try:\n            raise\n        except ZeroDivisionError:\n            pass\n"
    )
    tracemalloc.start()
    try:
        trace = run(source)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert trace.error is None
    assert peak < 20_000_000, peak


@pytest.mark.parametrize(
    "line",
    [
        "c = a + b",
        "c = a[torch.tensor([0], device='cuda')] if False else b[torch.tensor([0], device='cuda')]",
    ],
    ids=["mismatch", "index-device"],
)
def test_a_device_error_on_simulated_cuda_is_caught_as_on_a_gpu(line):
    """On a real GPU these raise RuntimeError, which `except RuntimeError` catches; simulated
    CUDA raises them from FakeTensorMode's or gradviz's own classes, caught the same way."""
    source = (
        "a = torch.ones(2, device='cuda')\nb = torch.ones(2)\ntry:\n"
        f"    {line}\nexcept RuntimeError as e:\n    print('caught')\n"
    )
    trace = run_program(source, RunOptions(classic=False, simulate_cuda=True))
    assert trace.error is None, trace.error
    assert trace.stdout == ["caught"]
