"""The one table of GPU figures: what each maker's spec sheet says, with its source and date.

The Speed page uses it twice: to say how close a measured GPU came to its peak
(gradviz.speed.timing.fraction_of_peak) and to estimate, from bytes moved and FLOPs, how fast
a GPU would run the page's workloads on a host that has none (gradviz.speed.estimate).
docs/gpus.md is generated from this table (`python scripts/gpu_table.py --write`; a test keeps
them equal).

Rules for a figure here:
- it is the maker's (NVIDIA's datasheet, product page or architecture whitepaper; Apple's
  newsroom; AWS for the A10G, a part only AWS sells), dense (no 2:4 sparsity), at boost clock;
- where the source gives only a figure "with sparsity", it is halved, and the figure is named
  in `halved` (NVIDIA's footnote: "Specifications 1/2 lower without sparsity");
- a figure computed from other figures on the maker's page (cores x clock) is named in
  `derived`, with how, in `note`;
- a figure the maker does not publish is None and `note` says so: nothing is filled in from
  third-party sites. Apple, for one, publishes no FLOP figure for most M-series GPUs.

The sources were not fetched from this project's machines (they have no web access): every
figure was transcribed from the cited document as quoted in public copies of it, listed in
`checked`, on CHECKED_ON.

No torch, no streamlit: plain data (the Streamlit server imports it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHECKED_ON = "2026-11-23"

# PCI Express per-lane signalling (GT/s) and line encoding, by generation (PCI-SIG): one
# direction's theoretical bytes/s = GT/s x lanes x encoding / 8.
PCIE_GTS = {3: 8.0, 4: 16.0, 5: 32.0}
PCIE_ENCODING = 128 / 130
PCIE_SOURCE = "https://pcisig.com/specifications"


@dataclass(frozen=True)
class HostLink:
    """How data reaches the GPU's memory from the CPU's: a PCIe link, or unified memory."""

    kind: str  # "pcie", "unified" or "unknown" (not published)
    gen: int = 0
    lanes: int = 0

    def describe(self) -> str:
        if self.kind == "unified":
            return "unified memory (CPU and GPU share it)"
        if self.kind == "unknown":
            return "not published"
        return f"PCIe Gen{self.gen} x{self.lanes}"

    def theoretical_gbps(self) -> float | None:
        """One direction, GB/s (10^9 bytes), before protocol overheads; None without a PCIe link."""
        if self.kind != "pcie":
            return None
        return PCIE_GTS[self.gen] * self.lanes * PCIE_ENCODING / 8


PCIE3_X16 = HostLink("pcie", 3, 16)
PCIE4_X16 = HostLink("pcie", 4, 16)
PCIE5_X16 = HostLink("pcie", 5, 16)
UNIFIED = HostLink("unified")
UNKNOWN_LINK = HostLink("unknown")

# The figures a row holds, in the order docs/gpus.md shows them.
FIGURES = ("memory_gbps", "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "memory_gb")


@dataclass(frozen=True)
class GPU:
    """One GPU's figures (None: not published by its maker) and where they come from."""

    key: str  # the short name the command line takes
    label: str
    backend: str  # "cuda" or "mps"
    memory_gbps: float | None  # memory bandwidth, GB/s
    fp32_tflops: float | None  # FP32 without tensor cores (PyTorch's float32 matmul default)
    tf32_tflops: float | None  # TF32 tensor cores, dense
    bf16_tflops: float | None  # BF16 tensor cores with FP32 accumulate, dense
    fp16_tflops: float | None  # FP16 tensor cores with FP32 accumulate, dense
    memory_gb: float | None
    link: HostLink
    source: str  # URL of the maker's document
    source_title: str
    as_of: str  # the document's date (year, or year-month, as the document or its id gives it)
    checked: str  # public copies quoting the document that the figures were checked against
    note: str = ""
    aliases: tuple[str, ...] = ()
    match: tuple[str, ...] = ()  # words that all appear in torch.cuda.get_device_name()
    halved: tuple[str, ...] = ()  # figures given only with sparsity, halved here
    derived: tuple[str, ...] = ()  # figures computed from the maker's other figures
    no_tf32: bool = False  # no TF32 units: "TF32" float32 matmuls run at the FP32 rate


_H100_HALVED = ("tf32_tflops", "bf16_tflops", "fp16_tflops")
_SPARSE_NOTE = (
    "The source gives tensor-core figures with sparsity only (its footnote: 1/2 lower without "
    "sparsity): halved here."
)
_APPLE_NOTE = (
    "Apple publishes no FP32, BF16 or FP16 FLOP figure for this GPU, so matrix products "
    "cannot be estimated; memory bandwidth is Apple's 'up to' figure (binned chips have less)."
)

GPUS: tuple[GPU, ...] = (
    GPU(
        key="T4",
        label="NVIDIA T4",
        backend="cuda",
        memory_gbps=300,
        fp32_tflops=8.1,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=65,
        memory_gb=16,
        link=PCIE3_X16,
        source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/"
        "t4-tensor-core-datasheet-951643.pdf",
        source_title="NVIDIA T4 Tensor Core GPU datasheet (951643)",
        as_of="2019",
        checked="xformers' profiler device limits and MosaicML composer's GPU FLOP table, both "
        "citing this datasheet",
        note="Turing: no TF32 (float32 matmuls run at the FP32 rate) and no BF16 tensor cores "
        "(no BF16 figure). FP16 is the datasheet's 'Mixed Precision (FP16/FP32)'.",
        aliases=("tesla t4",),
        match=("T4",),
        no_tf32=True,
    ),
    GPU(
        key="L4",
        label="NVIDIA L4",
        backend="cuda",
        memory_gbps=300,
        fp32_tflops=30.3,
        tf32_tflops=60,
        bf16_tflops=121,
        fp16_tflops=121,
        memory_gb=24,
        link=PCIE4_X16,
        source="https://www.nvidia.com/en-us/data-center/l4/",
        source_title="NVIDIA L4 Tensor Core GPU, product page specifications",
        as_of="2023-03",
        checked="Source Code store's L4 spec sheet copy; grokipedia NVIDIA L4 vs L40S",
        note=_SPARSE_NOTE + " (TF32 120, BF16 and FP16 242.)",
        match=("L4",),
        halved=_H100_HALVED,
    ),
    GPU(
        key="A10",
        label="NVIDIA A10",
        backend="cuda",
        memory_gbps=600,
        fp32_tflops=31.2,
        tf32_tflops=62.5,
        bf16_tflops=125,
        fp16_tflops=125,
        memory_gb=24,
        link=PCIE4_X16,
        source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/"
        "datasheet-new/nvidia-a10-datasheet.pdf",
        source_title="NVIDIA A10 Tensor Core GPU datasheet",
        as_of="2021",
        checked="GPU FLOP tables citing this datasheet (TF32 62.5, FP16/BF16 125, 600 GB/s)",
        match=("A10",),
    ),
    GPU(
        key="A10G",
        label="NVIDIA A10G (AWS)",
        backend="cuda",
        memory_gbps=None,
        fp32_tflops=None,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=24,
        link=UNKNOWN_LINK,
        source="https://aws.amazon.com/ec2/instance-types/g5/",
        source_title="Amazon EC2 G5 instances (AWS), and the EC2 accelerated-computing guide",
        as_of="2021-11",
        checked="AWS Batch GPU-jobs table (g5.xlarge: 1 GPU, 24 GiB of GPU memory)",
        note="A variant of the A10 built for AWS. Neither NVIDIA nor AWS publishes its "
        "bandwidth or FLOP figures (third parties quote 600 GB/s, like the A10's, but that is "
        "not a maker's figure), so no estimate is made: the A10 is its closest published "
        "relative. Its host link is not published either; AWS gives its memory as 24 GiB.",
        aliases=("a10g aws", "g5"),
        match=("A10G",),
    ),
    GPU(
        key="A100-40GB",
        label="NVIDIA A100 40GB",
        backend="cuda",
        memory_gbps=1555,
        fp32_tflops=19.5,
        tf32_tflops=156,
        bf16_tflops=312,
        fp16_tflops=312,
        memory_gb=40,
        link=PCIE4_X16,
        source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        source_title="NVIDIA A100 Tensor Core GPU datasheet (1758950-r4)",
        as_of="2021",
        checked="glennklockwood.com/garden/processors/A100 (quotes this datasheet)",
        note="PCIe and SXM4 40GB parts have the same figures. The SXM part reaches the host "
        "through PCIe Gen4 too (NVLink joins GPUs).",
        aliases=("a100 40gb", "a100-40", "a100 40"),
        match=("A100", "40GB"),
    ),
    GPU(
        key="A100-80GB-PCIe",
        label="NVIDIA A100 80GB PCIe",
        backend="cuda",
        memory_gbps=1935,
        fp32_tflops=19.5,
        tf32_tflops=156,
        bf16_tflops=312,
        fp16_tflops=312,
        memory_gb=80,
        link=PCIE4_X16,
        source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        source_title="NVIDIA A100 Tensor Core GPU datasheet (1758950-r4)",
        as_of="2021",
        checked="glennklockwood.com/garden/processors/A100; a public GPU spec survey citing "
        "this datasheet (1,935 GB/s)",
        aliases=("a100 80gb pcie", "a100 pcie"),
        match=("A100", "80GB", "PCIe"),
    ),
    GPU(
        key="A100-80GB-SXM",
        label="NVIDIA A100 80GB SXM",
        backend="cuda",
        memory_gbps=2039,
        fp32_tflops=19.5,
        tf32_tflops=156,
        bf16_tflops=312,
        fp16_tflops=312,
        memory_gb=80,
        link=PCIE4_X16,
        source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        source_title="NVIDIA A100 Tensor Core GPU datasheet (1758950-r4)",
        as_of="2021",
        checked="glennklockwood.com/garden/processors/A100 (2,039 GB/s)",
        note="'A100' on the command line means this part.",
        aliases=("a100", "a100 80gb", "a100 sxm", "a100 80gb sxm"),
        match=("A100", "SXM4-80GB"),
    ),
    GPU(
        key="H100-SXM",
        label="NVIDIA H100 SXM",
        backend="cuda",
        memory_gbps=3350,
        fp32_tflops=67,
        tf32_tflops=494.5,
        bf16_tflops=989.5,
        fp16_tflops=989.5,
        memory_gb=80,
        link=PCIE5_X16,
        source="https://www.nvidia.com/en-us/data-center/h100/",
        source_title="NVIDIA H100 Tensor Core GPU, product page and datasheet table",
        as_of="2022",
        checked="HPC Tech's copy of NVIDIA's H100 table (SXM and PCIe, with its sparsity "
        "footnote); glennklockwood.com/garden/processors/h100",
        note=_SPARSE_NOTE + " (TF32 989, BF16 and FP16 1,979.) 'H100' on the command line means "
        "this part.",
        aliases=("h100", "h100 sxm5"),
        match=("H100", "HBM3"),
        halved=_H100_HALVED,
    ),
    GPU(
        key="H100-PCIe",
        label="NVIDIA H100 PCIe",
        backend="cuda",
        memory_gbps=2000,
        fp32_tflops=51,
        tf32_tflops=378,
        bf16_tflops=756.5,
        fp16_tflops=756.5,
        memory_gb=80,
        link=PCIE5_X16,
        source="https://www.nvidia.com/content/dam/en-zz/Solutions/gtcs22/data-center/h100/"
        "PB-11133-001_v01.pdf",
        source_title="NVIDIA H100 PCIe GPU product brief (PB-11133-001_v01)",
        as_of="2022",
        checked="HPC Tech's copy of NVIDIA's H100 table (H100 PCIe column)",
        note=_SPARSE_NOTE + " (TF32 756, BF16 and FP16 1,513.)",
        match=("H100", "PCIe"),
        halved=_H100_HALVED,
    ),
    GPU(
        key="H200",
        label="NVIDIA H200",
        backend="cuda",
        memory_gbps=4800,
        fp32_tflops=67,
        tf32_tflops=494.5,
        bf16_tflops=989.5,
        fp16_tflops=989.5,
        memory_gb=141,
        link=PCIE5_X16,
        source="https://www.nvidia.com/en-us/data-center/h200/",
        source_title="NVIDIA H200 Tensor Core GPU, product page (datasheet 3367400)",
        as_of="2024-07",
        checked="public survey of NVIDIA datasheets quoting H200 datasheet 3367400.JUL24",
        note=_SPARSE_NOTE + " (TF32 989, BF16 and FP16 1,979.) Figures of the H200 SXM.",
        match=("H200",),
        halved=_H100_HALVED,
    ),
    GPU(
        key="RTX-4090",
        label="NVIDIA GeForce RTX 4090",
        backend="cuda",
        memory_gbps=1008,
        fp32_tflops=82.6,
        tf32_tflops=82.6,
        bf16_tflops=165.2,
        fp16_tflops=165.2,
        memory_gb=24,
        link=PCIE4_X16,
        source="https://images.nvidia.com/aem-dam/Solutions/geforce/ada/"
        "nvidia-ada-gpu-architecture.pdf",
        source_title="NVIDIA Ada GPU Architecture whitepaper, appendix A, table 2",
        as_of="2022",
        checked="a public GPU spec survey citing this whitepaper's appendix A table 2 (165.2, "
        "1,008 GB/s, PCIe Gen4); waredb.com's RTX 4090 page (82.58 FP32, TF32 82.58)",
        note="BF16 and FP16 with FP32 accumulate, as PyTorch's matmuls use (with FP16 "
        "accumulate the whitepaper gives twice that, 330.3).",
        aliases=("4090", "rtx4090", "geforce rtx 4090"),
        match=("RTX 4090",),
    ),
    GPU(
        key="GTX-1060",
        label="NVIDIA GeForce GTX 1060 6GB (the lesson's GPU)",
        backend="cuda",
        memory_gbps=192,
        fp32_tflops=4.37,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=6,
        link=PCIE3_X16,
        source="https://www.nvidia.com/en-gb/geforce/graphics-cards/geforce-gtx-1060/"
        "specifications/",
        source_title="NVIDIA GeForce GTX 1060 specifications",
        as_of="2016-07",
        checked="public tables quoting the page (1,280 CUDA cores, 1,708 MHz boost, 8 Gbps "
        "GDDR5 on 192 bits, 192 GB/s)",
        note="FP32 derived: 2 FLOPs x 1,280 CUDA cores x 1.708 GHz boost clock. Pascal has no "
        "tensor cores and no TF32 (float32 matmuls run at the FP32 rate); it runs FP16 slowly "
        "and NVIDIA gives no FP16 or BF16 figure.",
        aliases=("gtx 1060", "1060"),
        match=("GTX 1060",),
        derived=("fp32_tflops",),
        no_tf32=True,
    ),
    GPU(
        key="M1",
        label="Apple M1 (8-core GPU)",
        backend="mps",
        memory_gbps=None,
        fp32_tflops=2.6,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=16,
        link=UNIFIED,
        source="https://www.apple.com/newsroom/2020/11/apple-unleashes-m1/",
        source_title="Apple Newsroom: Apple unleashes M1",
        as_of="2020-11-10",
        checked="MacRumors' report of the announcement (2.6 teraflops)",
        note="Apple gives '2.6 teraflops of throughput' for the GPU but no memory bandwidth for "
        "M1 (its M2 release says only that M2's is 50 percent more), so nothing can be "
        "estimated: every estimate needs the bandwidth. No TF32; memory is 'up to 16GB'.",
        aliases=("apple m1",),
        no_tf32=True,
    ),
    GPU(
        key="M1-Pro",
        label="Apple M1 Pro",
        backend="mps",
        memory_gbps=200,
        fp32_tflops=None,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=32,
        link=UNIFIED,
        source="https://www.apple.com/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-"
        "powerful-chips-apple-has-ever-built/",
        source_title="Apple Newsroom: Introducing M1 Pro and M1 Max",
        as_of="2021-10-18",
        checked="reports of the announcement (Trend, MyBroadband, 9to5Mac)",
        note=_APPLE_NOTE,
        aliases=("m1pro", "apple m1 pro"),
        no_tf32=True,
    ),
    GPU(
        key="M1-Max",
        label="Apple M1 Max",
        backend="mps",
        memory_gbps=400,
        fp32_tflops=None,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=64,
        link=UNIFIED,
        source="https://www.apple.com/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-"
        "powerful-chips-apple-has-ever-built/",
        source_title="Apple Newsroom: Introducing M1 Pro and M1 Max",
        as_of="2021-10-18",
        checked="reports of the announcement (Trend, MyBroadband, 9to5Mac)",
        note=_APPLE_NOTE,
        aliases=("m1max", "apple m1 max"),
        no_tf32=True,
    ),
    GPU(
        key="M2",
        label="Apple M2",
        backend="mps",
        memory_gbps=100,
        fp32_tflops=None,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=24,
        link=UNIFIED,
        source="https://www.apple.com/newsroom/2022/06/apple-unveils-m2-with-breakthrough-"
        "performance-and-capabilities/",
        source_title="Apple Newsroom: Apple unveils M2",
        as_of="2022-06-06",
        checked="MacRumors' report of the announcement (100GB/s, up to 24GB)",
        note=_APPLE_NOTE,
        aliases=("apple m2",),
        no_tf32=True,
    ),
    GPU(
        key="M4",
        label="Apple M4",
        backend="mps",
        memory_gbps=120,
        fp32_tflops=None,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=32,
        link=UNIFIED,
        source="https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
        source_title="Apple Newsroom: Apple introduces M4 Pro and M4 Max",
        as_of="2024-10-30",
        checked="quotations of the release ('M4 supports up to 32GB of unified memory and has "
        "higher memory bandwidth of 120GB/s')",
        note=_APPLE_NOTE,
        aliases=("apple m4",),
        no_tf32=True,
    ),
    GPU(
        key="M4-Pro",
        label="Apple M4 Pro",
        backend="mps",
        memory_gbps=273,
        fp32_tflops=None,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=64,
        link=UNIFIED,
        source="https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
        source_title="Apple Newsroom: Apple introduces M4 Pro and M4 Max",
        as_of="2024-10-30",
        checked="MacRumors and TechCrunch reports of the release (273GB/s, up to 64GB)",
        note=_APPLE_NOTE,
        aliases=("m4pro", "apple m4 pro"),
        no_tf32=True,
    ),
    GPU(
        key="M4-Max",
        label="Apple M4 Max",
        backend="mps",
        memory_gbps=546,
        fp32_tflops=None,
        tf32_tflops=None,
        bf16_tflops=None,
        fp16_tflops=None,
        memory_gb=128,
        link=UNIFIED,
        source="https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
        source_title="Apple Newsroom: Apple introduces M4 Pro and M4 Max",
        as_of="2024-10-30",
        checked="MacRumors and TechCrunch reports of the release (up to 546GB/s, up to 128GB)",
        note=_APPLE_NOTE,
        aliases=("m4max", "apple m4 max"),
        no_tf32=True,
    ),
)

BY_KEY: dict[str, GPU] = {gpu.key: gpu for gpu in GPUS}


def _normal(name: str) -> str:
    """A name as matched: lower case, letters and digits only, maker and brand words dropped."""
    text = re.sub(r"[^a-z0-9]+", " ", name.lower())
    words = [w for w in text.split() if w not in ("nvidia", "geforce", "tesla", "apple")]
    return "".join(words)


class UnknownGPU(ValueError):
    """A name that is no GPU of the table: the message lists the names it knows."""


def find(name: str) -> GPU:
    """The GPU a user means by `name`: its key, label or an alias, in any case, with or without
    spaces, hyphens and the maker's name ("H100", "h100-pcie", "NVIDIA A100 80GB PCIe")."""
    wanted = _normal(name)
    for gpu in GPUS:
        if wanted and wanted in {_normal(n) for n in (gpu.key, gpu.label, *gpu.aliases)}:
            return gpu
    raise UnknownGPU(
        f"No GPU called {name!r} in the table of spec-sheet figures; choose one of "
        f"{', '.join(gpu.key for gpu in GPUS)} (docs/gpus.md)."
    )


def for_device_name(device_name: str) -> GPU | None:
    """The row for a GPU as torch names it ("NVIDIA H100 80GB HBM3"): the first whose `match`
    words all appear in the name as whole words. None when no row matches."""
    for gpu in GPUS:
        if gpu.match and all(
            re.search(rf"(?<![a-z0-9]){re.escape(word.lower())}(?![a-z0-9])", device_name.lower())
            for word in gpu.match
        ):
            return gpu
    return None


def matmul_tflops(gpu: GPU, dtype_key: str) -> float | None:
    """The dense peak (TFLOP/s) that bounds a matrix product in one of the Speed page's dtypes
    ("float32" strict, "tf32", "bfloat16", "float16"); None where the maker gives no figure."""
    if dtype_key == "float32" or (dtype_key == "tf32" and gpu.no_tf32):
        return gpu.fp32_tflops
    return {"tf32": gpu.tf32_tflops, "bfloat16": gpu.bf16_tflops, "float16": gpu.fp16_tflops}[
        dtype_key
    ]
