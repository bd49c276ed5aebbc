"""bench/bench_training.py: every run measured side by side, and the ratios it reports."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
from PIL import Image

BENCH = Path(__file__).resolve().parents[3] / "bench" / "bench_training.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_training", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _folder(root: Path) -> Path:
    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        for k in range(10):  # the tutorial's network has 10 outputs
            d = root / split / f"class{k}"
            d.mkdir(parents=True)
            for i in range(4):
                arr = rng.integers(0, 40, (32, 32, 3), dtype=np.uint8)
                arr[..., k % 3] += 20 * k
                Image.fromarray(arr).save(d / f"{i}.png")
    return root


def test_json_report_has_each_run_and_per_round_ratios(tmp_path, capsys):
    bench = _bench()
    code = bench.main(
        ["--data", str(_folder(tmp_path)), "--seconds", "0.3", "--rounds", "2", "--json"]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    names = list(out["images_per_s_median"])
    assert len(names) == 5
    assert any("NCHW" in n for n in names) and any("bare loop" in n for n in names)
    assert all(v > 0 for v in out["images_per_s_median"].values())
    for key in ("fast_over_bare_per_round", "channels_last_over_nchw_per_round"):
        assert len(out[key]) == 2 and all(r > 0 for r in out[key])
    rates = out["images_per_s_all"]
    fast, nchw = names[1], names[3]
    ratio = rates[fast][0] / rates[nchw][0]  # from rates rounded to 0.1 image/s
    assert abs(out["channels_last_over_nchw_per_round"][0] - ratio) < 0.01 * ratio


def test_bare_loop_uses_the_presets_memory_layout(tmp_path, monkeypatch):
    """The overhead ratio is only fair when the bare loop runs the model in the same layout."""
    import torch

    bench = _bench()
    data = bench.load_image_folder(str(_folder(tmp_path)))
    seen = []
    real = torch.nn.Conv2d.forward

    def spy(self, x):
        seen.append(x.is_contiguous(memory_format=torch.channels_last))
        return real(self, x)

    monkeypatch.setattr(torch.nn.Conv2d, "forward", spy)
    bench.bare_rate(data, "fast-cpu", 16, torch.device("cpu"), 0.05, channels_last=True)
    assert seen and all(seen)
    seen.clear()
    bench.bare_rate(data, "fast-cpu", 16, torch.device("cpu"), 0.05, channels_last=False)
    assert seen and not seen[0]
