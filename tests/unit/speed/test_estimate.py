"""The roofline estimate (gradviz.speed.estimate): units, bytes per dtype, the launch floor,
the copy, missing figures, and the crossover against CPU points."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gradviz.speed import estimate, gpus
from gradviz.speed.timing import Point
from gradviz.speed.workloads import TimingJob

# A made-up GPU with round figures, so the arithmetic is easy to check by hand.
ROUND = replace(
    gpus.BY_KEY["A100-40GB"],
    key="ROUND",
    memory_gbps=1000,
    fp32_tflops=10,
    tf32_tflops=100,
    bf16_tflops=200,
    fp16_tflops=400,
    link=gpus.PCIE4_X16,
)


def _job(workload="elementwise", size=10_000_000, dtype="float32", its=10):
    return TimingJob(workload, size, "cpu", dtype, its)


def test_elementwise_is_bytes_over_bandwidth():
    e = estimate.estimate(ROUND, _job())
    # 4 bytes x 10^7 elements x (3 + 6 x 10) reads and writes, at 10^12 bytes/s
    assert e.bytes_moved == 4 * 10**7 * 63
    assert e.memory_s == pytest.approx(2.52e-3)
    assert e.compute_s == pytest.approx(10**7 * 21 / 10e12)
    assert e.bound == "memory" and e.run_s == e.memory_s
    assert e.kernels == 21


def test_matmul_is_flops_over_peak_of_its_dtype():
    n = 4096
    for dtype, tflops in (("float32", 10), ("tf32", 100), ("bfloat16", 200), ("float16", 400)):
        e = estimate.estimate(ROUND, _job("matmul", n, dtype, 1))
        assert e.compute_s == pytest.approx(2 * n**3 / (tflops * 1e12)), dtype
        assert e.bound == "compute", dtype


def test_bytes_follow_the_dtype():
    f32 = estimate.estimate(ROUND, _job(dtype="float32"))
    tf32 = estimate.estimate(ROUND, _job(dtype="tf32"))
    for half in ("bfloat16", "float16"):
        e = estimate.estimate(ROUND, _job(dtype=half))
        assert e.bytes_moved == f32.bytes_moved / 2
        assert e.copy_bytes == f32.copy_bytes / 2
        assert e.memory_s == pytest.approx(f32.memory_s / 2)
    assert tf32.bytes_moved == f32.bytes_moved  # TF32 is float32 in memory
    assert tf32.run_s == f32.run_s  # and changes matmuls only


def test_small_calls_are_bound_by_launch_overhead():
    e = estimate.estimate(ROUND, _job(size=1000, its=10))
    assert e.bound == "launch overhead"
    assert e.run_s == pytest.approx(21 * estimate.LAUNCH_S)
    tiny_matmul = estimate.estimate(ROUND, _job("matmul", 16, "float32", 1))
    assert tiny_matmul.run_s == estimate.LAUNCH_S


def test_the_copy_uses_the_host_link_at_its_efficiency():
    job = _job(size=10**8, its=1)
    e = estimate.estimate(ROUND, job)
    link = gpus.PCIE4_X16.theoretical_gbps() * estimate.LINK_EFFICIENCY  # 25.2 GB/s
    assert e.copy_bytes == 2 * 4 * 10**8
    assert e.copy_s == pytest.approx(8e8 / (link * 1e9) + 2 * estimate.LAUNCH_S)
    assert e.total_s == pytest.approx(e.run_s + e.copy_s)
    gen5 = estimate.estimate(replace(ROUND, link=gpus.PCIE5_X16), job)
    assert gen5.copy_s < e.copy_s
    unified = replace(ROUND, link=gpus.UNIFIED, backend="mps")
    assert estimate.link_gbps(unified) == 500  # read, then write, at 1000 GB/s
    assert estimate.estimate(unified, job).copy_s < e.copy_s


def test_missing_figures_are_refused_with_a_reason():
    with pytest.raises(estimate.NoEstimate, match="no memory bandwidth"):
        estimate.estimate(gpus.BY_KEY["M1"], _job())
    with pytest.raises(estimate.NoEstimate, match="no memory bandwidth"):
        estimate.estimate(gpus.BY_KEY["A10G"], _job())
    with pytest.raises(estimate.NoEstimate, match="no float32 matrix-product peak"):
        estimate.estimate(gpus.BY_KEY["M4-Max"], _job("matmul", 1024, "float32", 1))
    with pytest.raises(estimate.NoEstimate, match="no bfloat16"):
        estimate.estimate(gpus.BY_KEY["T4"], _job("matmul", 1024, "bfloat16", 1))
    with pytest.raises(estimate.NoEstimate, match="no float16"):
        estimate.estimate(gpus.BY_KEY["GTX-1060"], _job("matmul", 1024, "float16", 1))
    # Apple's loop is memory-bound; the T4's "TF32" runs at its FP32 rate.
    apple = estimate.estimate(gpus.BY_KEY["M4-Max"], _job())
    assert apple.compute_s == 0 and apple.bound == "memory"
    t4 = gpus.BY_KEY["T4"]
    tf32 = estimate.estimate(t4, _job("matmul", 4096, "tf32", 1))
    assert tf32.run_s == estimate.estimate(t4, _job("matmul", 4096, "float32", 1)).run_s
    with pytest.raises(ValueError, match="at least 1"):
        estimate.estimate(ROUND, _job(size=0))


def test_real_rows_give_plausible_lesson_figures():
    """The lesson's full size (100x1000x1000, 1000 iterations): memory-bound everywhere."""
    job = _job(size=10**8, its=1000)
    h100 = estimate.estimate(gpus.BY_KEY["H100-SXM"], job)
    t4 = estimate.estimate(gpus.BY_KEY["T4"], job)
    assert h100.bound == t4.bound == "memory"
    assert h100.run_s == pytest.approx(4 * 10**8 * 6003 / 3350e9)  # about 0.72 s
    assert t4.run_s / h100.run_s == pytest.approx(3350 / 300)


def _cpu(workload, size, seconds, its=10):
    return Point(workload, "cpu", "float32", size, its, seconds, 0.0, 3)


def test_crossover_against_cpu_points_with_and_without_the_copy():
    # A CPU at 2 ns per element per call: 2 us at 1,000 elements, 200 ms at 10^8.
    sizes = [10**k for k in range(3, 9)]
    cpu = [_cpu("elementwise", n, 2e-9 * n) for n in sizes]
    h100 = gpus.BY_KEY["H100-SXM"]
    without = estimate.crossover_with(h100, cpu, with_copy=False)
    with_copy = estimate.crossover_with(h100, cpu, with_copy=True)
    # 21 launches x 5 us = 105 us: the GPU wins once the CPU takes longer, from 10^5 up.
    assert without == 100_000
    assert with_copy is not None and with_copy >= without
    # A CPU faster than the copy everywhere: never, with the copy.
    fast_cpu = [_cpu("elementwise", n, 1e-11 * n) for n in sizes]
    assert estimate.crossover_with(h100, fast_cpu, with_copy=True) is None
    assert estimate.crossover_with(h100, [], with_copy=False) is None


def test_scaled_cpu_points_follow_the_cost_model():
    cal = Point("elementwise", "cpu", "float32", 2_000_000, 2, 0.01, 0.0, 3)
    points = estimate.scaled_cpu_points(cal, [1_000_000, 4_000_000], 10)
    per_element_call = 0.01 / (2_000_000 * 15)  # bytes: 3 + 6 x 2 = 15 units per element
    assert points[0].median_s == pytest.approx(per_element_call * 1_000_000 * 63)
    assert points[1].median_s == pytest.approx(4 * points[0].median_s)
    assert all(p.device == "cpu" and p.iterations == 10 for p in points)


def test_grid_and_speedup_text():
    assert estimate.grid("elementwise")[:4] == [100, 200, 500, 1000]
    assert estimate.grid("matmul")[:4] == [16, 24, 32, 48]
    assert estimate.speedup(1.0, 0.01) == "100x faster"
    assert estimate.speedup(1.0, 0.4) == "2.5x faster"
    assert estimate.speedup(0.001, 0.004) == "4.0x slower"
    assert estimate.speedup(1.0, 0.0) == ""


def test_every_assumption_says_why():
    for a in estimate.ASSUMPTIONS:
        assert a.name and a.value and len(a.why) > 20
        assert not a.source or a.source.startswith("https://")
