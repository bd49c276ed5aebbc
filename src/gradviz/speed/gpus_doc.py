"""The table of GPUs (gradviz.speed.gpus.GPUS) as docs/gpus.md shows it, written there by
scripts/gpu_table.py between DOC_BEGIN and DOC_END."""

from __future__ import annotations

from gradviz.speed.gpus import FIGURES, GPU, GPUS

DOC_BEGIN, DOC_END = "<!-- generated: scripts/gpu_table.py -->", "<!-- end generated -->"
_HEADINGS = {
    "memory_gbps": "memory GB/s",
    "fp32_tflops": "FP32 TFLOPS",
    "tf32_tflops": "TF32",
    "bf16_tflops": "BF16",
    "fp16_tflops": "FP16",
    "memory_gb": "memory GB",
}


def _figure(gpu: GPU, name: str) -> str:
    value = getattr(gpu, name)
    if value is None:
        return "(FP32 rate)" if name == "tf32_tflops" and gpu.no_tf32 else "—"
    mark = "½" if name in gpu.halved else "≈" if name in gpu.derived else ""
    return f"{value:,g}{mark}"


def markdown() -> str:
    """The table as docs/gpus.md shows it (between DOC_BEGIN and DOC_END)."""
    head = ["GPU", *(_HEADINGS[f] for f in FIGURES), "host link", "source", "date"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for gpu in GPUS:
        cells = [
            f"{gpu.label} (`{gpu.key}`)",
            *(_figure(gpu, f) for f in FIGURES),
            gpu.link.describe(),
            f"[{gpu.source_title}]({gpu.source})",
            gpu.as_of,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        f"- **{gpu.label}**: {gpu.note} Checked against: {gpu.checked}.".replace(":  ", ": ")
        for gpu in GPUS
    ]
    return "\n".join(
        [
            DOC_BEGIN,
            *lines,
            "",
            "½: given by the source with sparsity only, halved here. ≈: derived from the "
            "source's other figures (see the note). —: not published by the maker. TFLOPS are "
            "dense tensor-core peaks except FP32 (no tensor cores); GB = 10^9 bytes.",
            "",
            *notes,
            DOC_END,
        ]
    )
