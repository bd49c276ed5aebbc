"""The networks: TutorialNet matches the tutorial layer for layer; FastNet variants build and run."""

import pytest
import torch

from gradviz.training.models import (
    ARCHITECTURES,
    TutorialNet,
    build_model,
    count_parameters,
    normalization_for,
)


def test_tutorial_net_is_the_tutorials():
    net = TutorialNet()
    shapes = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    assert shapes == {
        "conv1.weight": (6, 3, 5, 5),
        "conv1.bias": (6,),
        "conv2.weight": (16, 6, 5, 5),
        "conv2.bias": (16,),
        "fc1.weight": (120, 400),
        "fc1.bias": (120,),
        "fc2.weight": (84, 120),
        "fc2.bias": (84,),
        "fc3.weight": (10, 84),
        "fc3.bias": (10,),
    }
    assert count_parameters(net) == 62006
    assert net(torch.zeros(4, 3, 32, 32)).shape == (4, 10)


@pytest.mark.parametrize("arch", sorted(ARCHITECTURES))
def test_every_architecture_runs(arch):
    model = build_model(arch)
    out = model(torch.randn(2, 3, 32, 32))
    assert out.shape == (2, 10)


def test_fast_net_class_count_and_errors():
    assert build_model("fast-cpu", num_classes=3)(torch.randn(1, 3, 32, 32)).shape == (1, 3)
    with pytest.raises(ValueError, match="10 outputs"):
        build_model("tutorial", num_classes=3)
    with pytest.raises(ValueError, match="Unknown architecture"):
        build_model("resnet")


def test_normalization():
    assert normalization_for("tutorial") == ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    assert normalization_for("fast-cpu")[0][0] == pytest.approx(0.4914)
