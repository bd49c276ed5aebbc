"""The table of GPU figures (gradviz.speed.gpus): every row cites its maker, the names people
type find their row, and docs/gpus.md is the table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gradviz.speed import gpus, gpus_doc

ROOT = Path(__file__).resolve().parents[3]
MAKERS = ("https://www.nvidia.com/", "https://images.nvidia.com/", "https://www.apple.com/")


def test_every_row_cites_a_makers_page_with_a_date():
    for gpu in gpus.GPUS:
        assert gpu.source.startswith(MAKERS) or gpu.key == "A10G", gpu.key
        assert gpu.source_title and gpu.checked, gpu.key
        assert gpu.as_of[:4].isdigit() and 2016 <= int(gpu.as_of[:4]) <= 2026, gpu.key
    assert gpus.BY_KEY["A10G"].source.startswith("https://aws.amazon.com/")  # sold by AWS only


def test_figures_are_positive_or_absent_and_marks_name_real_figures():
    for gpu in gpus.GPUS:
        for name in gpus.FIGURES:
            value = getattr(gpu, name)
            assert value is None or value > 0, (gpu.key, name)
        for name in (*gpu.halved, *gpu.derived):
            assert name in gpus.FIGURES and getattr(gpu, name) is not None, (gpu.key, name)
        if gpu.halved:
            assert "sparsity" in gpu.note, gpu.key
        if gpu.derived:
            assert "derived" in gpu.note, gpu.key
        assert not (gpu.no_tf32 and gpu.tf32_tflops is not None), gpu.key


def test_the_issues_gpus_are_all_there():
    keys = set(gpus.BY_KEY)
    wanted = {"T4", "L4", "A10G", "A100-40GB", "A100-80GB-PCIe", "A100-80GB-SXM"}
    wanted |= {"H100-SXM", "H100-PCIe", "RTX-4090"}
    assert wanted <= keys
    assert any(g.backend == "mps" for g in gpus.GPUS)
    assert len(keys) == len(gpus.GPUS)


def test_sparse_only_figures_are_half_the_sparse_ones():
    """The notes quote the source's sparse figures; the table holds half of them."""
    h100 = gpus.BY_KEY["H100-SXM"]
    assert (h100.tf32_tflops, h100.bf16_tflops, h100.fp16_tflops) == (494.5, 989.5, 989.5)
    assert "TF32 989, BF16 and FP16 1,979" in h100.note
    l4 = gpus.BY_KEY["L4"]
    assert (l4.tf32_tflops, l4.fp16_tflops) == (60, 121)
    assert "TF32 120, BF16 and FP16 242" in l4.note
    a100 = gpus.BY_KEY["A100-80GB-SXM"]  # its datasheet gives dense figures itself
    assert not a100.halved and a100.tf32_tflops == 156


def test_apple_publishes_bandwidth_not_flops():
    m4max = gpus.BY_KEY["M4-Max"]
    assert m4max.memory_gbps == 546 and m4max.fp32_tflops is None
    assert m4max.link.kind == "unified" and m4max.link.theoretical_gbps() is None
    m1 = gpus.BY_KEY["M1"]
    assert m1.memory_gbps is None and m1.fp32_tflops == 2.6


@pytest.mark.parametrize(
    "name, key",
    [
        ("H100", "H100-SXM"),
        ("h100", "H100-SXM"),
        ("NVIDIA H100 SXM", "H100-SXM"),
        ("h100-pcie", "H100-PCIe"),
        ("H100 PCIe", "H100-PCIe"),
        ("a100", "A100-80GB-SXM"),
        ("A100 40GB", "A100-40GB"),
        ("nvidia a100 80gb pcie", "A100-80GB-PCIe"),
        ("t4", "T4"),
        ("Tesla T4", "T4"),
        ("rtx 4090", "RTX-4090"),
        ("4090", "RTX-4090"),
        ("GeForce RTX 4090", "RTX-4090"),
        ("m4 max", "M4-Max"),
        ("Apple M2", "M2"),
        ("a10g", "A10G"),
    ],
)
def test_names_people_type_find_their_row(name, key):
    assert gpus.find(name).key == key


def test_an_unknown_name_lists_the_choices():
    with pytest.raises(gpus.UnknownGPU) as err:
        gpus.find("H900")
    assert "'H900'" in str(err.value)
    for key in ("T4", "H100-SXM", "M4-Max"):
        assert key in str(err.value)
    with pytest.raises(gpus.UnknownGPU):
        gpus.find("")


def test_matmul_peak_by_dtype():
    t4 = gpus.BY_KEY["T4"]
    assert gpus.matmul_tflops(t4, "float32") == 8.1
    assert gpus.matmul_tflops(t4, "tf32") == 8.1  # no TF32 units: the FP32 rate
    assert gpus.matmul_tflops(t4, "bfloat16") is None
    assert gpus.matmul_tflops(t4, "float16") == 65
    h100 = gpus.BY_KEY["H100-SXM"]
    assert gpus.matmul_tflops(h100, "tf32") == 494.5
    assert gpus.matmul_tflops(gpus.BY_KEY["M4"], "float32") is None


def test_pcie_one_way_rates():
    assert gpus.PCIE3_X16.theoretical_gbps() == pytest.approx(15.75, abs=0.01)
    assert gpus.PCIE4_X16.theoretical_gbps() == pytest.approx(31.51, abs=0.01)
    assert gpus.PCIE5_X16.theoretical_gbps() == pytest.approx(63.02, abs=0.01)
    assert gpus.PCIE4_X16.describe() == "PCIe Gen4 x16"


def test_docs_table_is_the_modules_table():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gpu_table.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == gpus_doc.markdown()
    doc = (ROOT / "docs" / "gpus.md").read_text()
    assert gpus_doc.markdown() in doc, (
        "docs/gpus.md is out of date: python scripts/gpu_table.py --write"
    )
    for gpu in gpus.GPUS:
        assert gpu.source in doc
