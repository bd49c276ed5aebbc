"""Node ids across reruns: the viewer keeps the view on the tensor it was centred on by id and
label (viewer.js restoreView), so a program that grows at the end must keep its nodes' ids,
and within one graph a tensor's label must name one node (the fallback when ids shift)."""

from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.results.trace import RunOptions

LESSON = PRESETS_BY_KEY["lesson"].source


def _nodes(source: str) -> dict[str, str]:
    trace = run_program(source, RunOptions(backward="y"))
    return {n.id: n.title for n in trace.graph.nodes}


def test_a_line_added_at_the_end_keeps_every_node_s_id():
    before = _nodes(LESSON)
    after = _nodes(LESSON + "w = y * 3\n")
    assert len(after) == len(before) + 2  # w and its MulBackward0
    assert {k: after[k] for k in before} == before


def test_a_line_inserted_in_the_middle_keeps_each_tensor_s_label_unique():
    source = LESSON.replace("b = a ** 2\n", "z = x * 5\nb = a ** 2\n")
    trace = run_program(source, RunOptions(backward="y"))
    labels = [n.title for n in trace.graph.nodes if n.kind == "tensor"]
    assert "z" in labels and len(labels) == len(set(labels))
