"""What a run lets go of when it ends (run_program's _release): the program's syntax tree is
freed as the run returns, not left in cycles for the cyclic garbage collector, and the
names an expression reads (gradviz.program.recording.sources) come in ast.walk's order."""

from __future__ import annotations

import ast
import gc

from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.recording.sources import read_names
from gradviz.program.recording.state import RunState
from gradviz.program.results.trace import RunOptions

CHAIN = (
    "h = torch.ones(4)\n"
    + "".join(
        f"w{i} = torch.full((4,), 0.9, requires_grad=True)\nh = torch.tanh(h * w{i})\n"
        for i in range(20)
    )
    + "y = h.sum()\n"
)


def _cyclic_garbage(source: str, backward: str | None = None) -> list:
    """What the cyclic collector finds to free after run_program(source) (run once before:
    a first run imports and sets up what later ones find ready)."""
    run_program(source, RunOptions(backward=backward))
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        trace = run_program(source, RunOptions(backward=backward))
        assert trace.error is None, trace.error
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


def test_a_runs_syntax_tree_is_not_left_to_the_cyclic_collector():
    runs = [(CHAIN, "y")] + [
        (PRESETS_BY_KEY[k].source, None) for k in ("lesson", "control_flow", "sgd_loop")
    ]
    for source, backward in runs:
        garbage = _cyclic_garbage(source, backward)
        assert not [o for o in garbage if isinstance(o, ast.AST)], source[:40]
    # nor a closure per torch call (torch's tree_flatten makes one; a tensor needs none):
    # a few for the run (its backward call), not one for each of the chain's 20 tanh
    garbage = _cyclic_garbage(CHAIN, "y")
    closures = [o for o in garbage if getattr(o, "__qualname__", "").startswith("tree_flatten")]
    assert len(closures) < 10, len(closures)


def test_forget_syntax_drops_the_caches_keyed_by_nodes():
    state = RunState("x = 1\n", RunOptions())
    node = ast.parse("y = a + b").body[0].value
    state.segment(node)
    assert read_names(state, node) == ("a", "b")
    state.node = node
    state.forget_syntax()
    assert state.node is None and not state.names_read
    assert state.segment(ast.parse("x").body[0]) == "x"


def test_names_read_in_ast_walks_order_each_once():
    state = RunState("x = 1\n", RunOptions())
    for text in [
        "torch.tanh(h * w) + f(a, b=h)[c].d",
        "[x * y for x in xs if x > k] + g(lambda z: z + q)",
        "a if b else (c, d, a)",
    ]:
        node = ast.parse(text, mode="eval").body
        walked = [
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        ]
        assert read_names(state, node) == tuple(dict.fromkeys(walked))
        assert read_names(state, node) is state.names_read[node]
