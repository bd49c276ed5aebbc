"""gradviz.devices.simulated and simulated CUDA: every device lesson, on a CPU-only run.

Simulated CUDA is forced (simulate_cuda=True), so these run the same on any machine.
tests/unit/devices/test_devices_gpu.py runs the same lessons on a real GPU.
"""

from __future__ import annotations

import pytest
import torch

from gradviz.devices import facts as device_facts
from gradviz.devices import info as device_info
from gradviz.devices import simulated as devices
from gradviz.devices.errors import DEVICE_ERRORS, explain_device_error
from gradviz.devices.lessons import LESSONS, LESSONS_BY_KEY
from gradviz.graph.dot import COPY_COLOR, DEVICE_COLORS
from gradviz.graph.render import draw
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

SIM = {"simulate_cuda": True, "classic": False}


def run(source: str, **options):
    return run_program(source, RunOptions(**{**SIM, **options}))


@pytest.mark.parametrize("lesson", [x for x in LESSONS if x.error], ids=lambda x: x.key)
def test_each_mixing_error_is_pytorchs_own_and_explained(lesson):
    trace = run(lesson.source)
    err = trace.error
    assert err is not None, f"{lesson.key}: expected PyTorch to refuse"
    assert err.kind == "runtime"
    assert err.line == lesson.line
    details = err.details
    assert details.device.kind == lesson.kind
    assert list(details.device.devices) == list(lesson.devices)
    assert details.device.move == lesson.move
    assert details.device.fix_code == lesson.fix
    assert lesson.fix in details.fix
    assert details.device.source.startswith("simulated")
    assert details.device.rule
    # the tensors of the failing operation, each with its device
    for dev in lesson.devices:
        assert dev in dict(details.device.tensors).values()


@pytest.mark.parametrize("lesson", [x for x in LESSONS if not x.error], ids=lambda x: x.key)
def test_allowed_mixes_run(lesson):
    trace = run(lesson.source)
    assert trace.error is None, trace.error


def test_device_mismatch_message_is_fake_tensor_modes():
    err = run(LESSONS_BY_KEY["binary"].source).error
    assert err.message == (
        "Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cpu!"
    )
    assert "simulated CUDA" in err.details.device.source
    assert "FakeTensorMode" not in err.details.device.source  # a student reads it
    assert "0-dim CPU tensor" in err.details.device.rule


def test_rules_fake_tensor_mode_skips_are_marked_as_applied_by_gradviz():
    for key in ("index_gpu_index", "numpy"):
        details = run(LESSONS_BY_KEY[key].source).error.details
        assert "applied by gradviz" in details.device.source
    err = run(LESSONS_BY_KEY["numpy"].source).error
    assert err.message.startswith("can't convert cuda:0 device type tensor to numpy")


def test_values_and_gradients_come_from_the_cpu_and_devices_from_pytorch():
    trace = run(LESSONS_BY_KEY["copy"].source)
    assert trace.error is None and trace.simulated
    by = {t.label: t for t in trace.tensors}
    assert by["x"].device == "cpu"
    assert by["xg"].device == "cuda:0"
    assert by["y"].device == "cuda:0"
    assert by["back"].device == "cpu"
    assert by["x"].grad == [2.0, 4.0, 6.0]  # d/dx sum(x²) = 2x, computed for real on the CPU
    assert by["xg"].grad_fn == "ToCopyBackward0"


def test_zero_dim_cpu_tensor_may_join_a_gpu_tensor_and_grads_live_on_their_tensors_device():
    trace = run(LESSONS_BY_KEY["zero_dim"].source + "g = a.grad\n")
    assert trace.error is None
    by = {t.label: t for t in trace.tensors}
    assert by["s"].device == "cpu" and by["c"].device == "cuda:0"
    assert by["g"].device == "cuda:0"
    assert by["a"].grad == [2.0, 2.0, 2.0]


def test_programs_see_the_simulated_device():
    trace = run(
        "x = torch.ones(2, device='cuda')\n"
        "print(x.device, x.is_cuda, torch.cuda.is_available(), torch.cuda.device_count())\n"
        "print(x)\n"
    )
    assert trace.error is None
    assert trace.stdout[0] == "cuda:0 True True 2"
    assert trace.stdout[1] == "tensor([1., 1.], device='cuda:0')"
    assert any("simulated" in n for n in trace.device_notes)


def test_copy_edges_are_marked_and_nodes_coloured_by_device():
    trace = run(LESSONS_BY_KEY["copy"].source)
    copies = [e for e in trace.graph.edges if e.copy]
    assert [e.copy for e in copies] == ["cpu→cuda:0", "cuda:0→cpu"]
    dot = draw(trace)
    assert "copy cpu→cuda:0" in dot and COPY_COLOR in dot
    assert DEVICE_COLORS["cuda:0"] in dot
    assert "cuda:0 (simulated)" in dot
    assert "cluster_devices" in dot


def test_cpu_only_programs_draw_as_before():
    trace = run("x = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n")
    dot = draw(trace)
    assert "cluster_devices" not in dot and DEVICE_COLORS["cuda:0"] not in dot


def test_device_overrides_move_leaves_at_binding_time():
    source = "w = torch.randn(2, 3, requires_grad=True)\nx = torch.randn(3)\ny = (w @ x).sum()\n"
    both = run(source, device_overrides={"w": "cuda:0", "x": "cuda:0"}, backward="y")
    assert both.error is None
    by = {t.label: t for t in both.tensors}
    assert by["w"].device == by["x"].device == by["y"].device == "cuda:0"
    assert by["w"].is_leaf and by["w"].grad is not None
    assert [m.name for m in both.moves] == ["w", "x"]
    assert both.moves[0].to_device == "cuda:0"
    # the same values as on the CPU
    plain = run(source, backward="y")
    assert plain.tensor("w").grad == by["w"].grad
    one = run(source, device_overrides={"w": "cuda:0"})
    assert one.error.details.device.move == "x"
    assert one.error.details.device.fix_code == "x = x.to(w.device)"


def test_without_simulation_there_is_no_shadow():
    if torch.cuda.is_available():
        pytest.skip("this host has CUDA")
    trace = run_program("x = torch.ones(2, device='cuda')\n", RunOptions(simulate_cuda=False))
    assert trace.error is not None and not trace.simulated
    assert trace.error.details.device.kind == "no_cuda"


def test_list_devices_has_cpu_and_labelled_simulated_cuda():
    found = device_facts.list_devices()
    assert found[0].key == "cpu"
    cuda = [d for d in found if d.kind == "cuda"]
    assert cuda
    if not torch.cuda.is_available():
        assert devices.simulation_needed()
        assert [d.label for d in cuda] == ["cuda:0 (simulated)", "cuda:1 (simulated)"]
        assert device_facts.device_choices() == ["cpu", "cuda:0", "cuda:1"]


def test_explain_device_error_names_the_tensor_to_move():
    msg = "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! (when checking argument for argument mat2 in method wrapper_CUDA_mm)"
    exp = explain_device_error(msg, {"w": "cuda:0", "x": "cpu"})
    assert exp.kind == "device_mismatch"
    assert exp.fix_code == "x = x.to(w.device)"
    assert exp.devices == ["cpu", "cuda:0"]
    assert explain_device_error("mat1 and mat2 shapes cannot be multiplied", {}) is None


def test_model_placement_asks_pytorch():
    cpu = devices.model_placement("cpu")
    assert cpu["device"] == "cpu" and not cpu["simulated"]
    if not torch.cuda.is_available():
        gpu = devices.model_placement("cuda:0")
        assert gpu["device"] == "cuda:0" and gpu["simulated"]
        assert set(gpu["parameters"].values()) == {"cuda:0"}


def test_trace_memory_per_device():
    trace = run(LESSONS_BY_KEY["copy"].source)
    rows = {r["device"]: r for r in device_info.trace_memory(trace.tensors, trace.simulated)}
    assert rows["cpu"]["bytes"] == 12 + 4  # x (3 float32 values) and back (a scalar)
    assert rows["cuda:0 (simulated)"]["tensors"] == 2


def test_simulated_cuda_has_two_devices_and_says_so():
    err = run("x = torch.randn(3, device='cuda:5')\n").error
    assert err.kind == "runtime" and "simulated CUDA has 2 devices" in err.message
    err = run("x = torch.randn(3).to('cuda:7')\n").error
    assert "cuda:7 does not exist" in err.message
    assert run("x = torch.randn(3, device='cudaX')\n").error.kind == "runtime"


def test_ops_fake_tensor_mode_cannot_run_follow_their_input():
    trace = run("x = torch.randn(3, device='cuda')\ni = x.nonzero()\nj = x.sum().item()\nk = x.T\n")
    assert trace.error is None
    assert {t.label: t.device for t in trace.tensors} == {
        "x": "cuda:0",
        "i": "cuda:0",
        "k": "cuda:0",
    }


def test_gradient_check_works_with_simulated_devices():
    from gradviz.program.gradcheck import check_gradients

    source = LESSONS_BY_KEY["copy"].source
    trace = run(source)
    shown = {t.name: t.grad for t in trace.tensors if t.is_leaf and t.requires_grad}
    assert check_gradients(source, "y", shown).ok


def test_both_forms_of_the_mismatch_message_are_explained():
    # Real-GPU texts were not captured here (no GPU); these are the two shapes the message
    # takes in PyTorch's sources. The operands' devices come from the interpreter either way.
    named = {"w": "cuda:0", "x": "cpu"}
    for msg in (
        "Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cpu! (when checking argument for argument mat2 in method wrapper_CUDA_mm)",
        "Expected all tensors to be on the same device, but got mat2 is on cpu, different "
        "from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_mm)",
    ):
        exp = explain_device_error(msg, named)
        assert exp.devices == ["cuda:0", "cpu"]
        assert exp.fix_code == "x = x.to(w.device)"


@pytest.mark.parametrize(
    ("message", "named", "case", "move", "fix"),
    [
        (
            "found at least two devices, cuda:1 and cuda:0!",
            {"a": "cuda:0", "b": "cuda:1"},
            "two_gpus",
            "a",
            "a = a.to(b.device)",
        ),
        (
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cpu and cuda:0!",
            {},
            "gpu_and_cpu",
            None,
            "x = x.to('cuda:0')  # the cpu operand",
        ),
        (
            "indices should be either on cpu or on the same device as the indexed tensor (cpu)",
            {"t": "cpu", "idx": "cuda:0"},
            "index_device",
            "idx",
            "idx = idx.to(t.device)",
        ),
        (
            "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
            "tensor to host memory first.",
            {"g": "cuda:0"},
            "numpy_cuda",
            "g",
            "g.detach().cpu().numpy()",
        ),
        (
            "Found no NVIDIA driver on your system.",
            {},
            "no_cuda",
            None,
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
        ),
    ],
)
def test_each_device_error_gets_its_words_and_fix(message, named, case, move, fix):
    exp = explain_device_error(message, named)
    text = DEVICE_ERRORS[case]
    assert (exp.kind, exp.title, exp.move, exp.fix_code) == (text.kind, text.title, move, fix)
    assert "{" not in exp.rule and exp.rule.startswith(text.rule[:40])
    if case == "two_gpus":
        assert "cuda:1 and cuda:0 have separate memory" in exp.rule


def test_gradient_check_of_a_module_moved_to_the_gpu_runs_in_float64_on_its_device():
    """The preset user_module_device: model.to(device) moves the layer's parameters; the
    check's float64 stand-ins for them must follow (they stayed on the CPU: cuda:0 and cpu
    mixed in the re-run). Through the page's path (services.check_isolated), in process."""
    from gradviz.program.presets import PRESETS_BY_KEY
    from gradviz.services.programs import check_isolated

    preset = PRESETS_BY_KEY["user_module_device"]
    trace = run_program(preset.source, RunOptions(backward="out", **SIM))
    assert trace.error is None and trace.simulated
    assert trace.stdout == ["cuda:0"]
    shown = {t.name: t.grad for t in trace.tensors if t.is_leaf and t.requires_grad}
    assert set(shown) == {"model.linear.weight", "model.linear.bias", "x"}
    result = check_isolated(preset.source, "out", shown, RunOptions(simulate_cuda=True))
    assert result.ok, result.message
    assert result.gradcheck_passed
    assert [c.name for c in result.leaves if c.ok] == list(shown)
