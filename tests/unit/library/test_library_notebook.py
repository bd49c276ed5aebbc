"""examples/library.ipynb run by a real Jupyter kernel (nbclient with ipykernel): the SVG
each figure displays holds the lesson's names, values and gradients and resnet18's clusters."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gradviz.graph.render import dot_available

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")
pytest.importorskip("torchvision")

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = ROOT / "examples" / "library.ipynb"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not dot_available(), reason="Graphviz's dot is not installed"),
]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, list[dict]]:
    """Each tagged cell's outputs, after the whole notebook ran in a fresh kernel whose
    gradviz is this checkout's."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    where = tmp_path_factory.mktemp("notebook")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), old]))
    try:
        client = nbclient.NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(where)}}
        )
        client.execute()
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old
    return {
        tag: cell.get("outputs", [])
        for cell in nb.cells
        for tag in cell.get("metadata", {}).get("tags", [])
    }


def svg_of(cell_outputs: list[dict]) -> str:
    shown = [
        o["data"]["image/svg+xml"] for o in cell_outputs if "image/svg+xml" in o.get("data", {})
    ]
    assert len(shown) == 1, cell_outputs
    return shown[0]


def test_the_kernel_imported_this_checkouts_gradviz(outputs):
    text = "".join(o.get("text", "") for o in outputs["text"])
    assert text.startswith("<gradviz Figure (values):") and "digraph gradviz {" in text


def test_the_lesson_before_backward_shows_values_and_no_gradients(outputs):
    svg = svg_of(outputs["lesson-before"])
    for text in ("a = x + 2", "b = a ** 2", "y = b.mean()", ">x<", "data [3.0000, 4.0000, 5.0000]"):
        assert text in svg, text
    assert "before backward(): no gradients yet" in svg and "grad —" in svg
    assert "grad [" not in svg


def test_the_lesson_after_backward_shows_each_gradient(outputs):
    svg = svg_of(outputs["lesson-after"])
    assert "after backward()" in svg
    assert "grad [2.0000, 2.6667, 3.3333]" in svg  # x.grad = 2(x + 2)/3
    assert "grad [0.3333, 0.3333, 0.3333]" in svg  # b.grad = 1/3
    assert "grad 1.0000" in svg  # y


def test_the_tutorial_net_has_named_parameters_in_layer_clusters(outputs):
    svg = svg_of(outputs["net"])
    for text in ("fc1.weight", "conv2.bias", "fc1: Linear", "conv1: Conv2d", "loss"):
        assert text in svg, text


def test_resnet18_shows_its_blocks_and_layers_as_clusters(outputs):
    svg = svg_of(outputs["resnet18"])
    for text in (
        "model: ResNet",
        "model.layer1: Sequential",
        "model.layer1.0: BasicBlock",
        "model.layer4.1: BasicBlock",
        "model.layer2.0.downsample: Sequential",
        "model.fc.weight",
        "logits",
    ):
        assert text in svg, text
    assert svg.count('class="cluster"') > 50
