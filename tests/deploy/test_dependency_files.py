"""The files Community Cloud and the set-up script read: pins, the CPU index, the config.

requirements.txt is what Cloud installs (CPU-only torch from PyTorch's CPU index);
requirements-local.txt is the local set-up (PyPI's torch, the CUDA build on Linux);
requirements-dev.txt adds the test tools to the local set. Cloud also reads packages.txt
(Debian packages) and .streamlit/config.toml.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!-]+)$")


def parse(name: str) -> tuple[dict[str, str], list[str]]:
    """(package -> pinned version, option lines) of one requirements file, -r followed."""
    pins: dict[str, str] = {}
    options: list[str] = []
    for raw in (ROOT / name).read_text().splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            sub_pins, sub_options = parse(line[3:].strip())
            pins.update(sub_pins)
            options += sub_options
            continue
        if line.startswith("-"):
            options.append(line)
            continue
        match = PIN.match(line)
        assert match, f"{name}: {line!r} is not pinned with =="
        package = match[1].lower().replace("_", "-")
        assert package not in pins, f"{name}: {package} listed twice"
        pins[package] = match[2]
    return pins, options


@pytest.mark.parametrize(
    "name", ["requirements.txt", "requirements-local.txt", "requirements-dev.txt"]
)
def test_every_requirement_is_pinned(name):
    pins, _ = parse(name)  # parse() fails on any line that is not `name==version`
    assert {"torch", "torchvision", "streamlit", "torchviz", "graphviz", "setuptools"} <= set(pins)


def test_cloud_gets_the_cpu_build_of_the_local_versions():
    cloud, cloud_options = parse("requirements.txt")
    local, local_options = parse("requirements-local.txt")
    for package in ("torch", "torchvision"):
        assert cloud[package] == local[package] + "+cpu", package
        assert "+" not in local[package], f"the local {package} is PyPI's build, no local tag"
    assert cloud_options == [f"--extra-index-url {CPU_INDEX}"]
    assert local_options == [], "the local set-up installs from PyPI only"


def test_shared_pins_are_the_same_in_both_sets():
    cloud, _ = parse("requirements.txt")
    local, _ = parse("requirements-local.txt")
    drop = {"torch", "torchvision"}
    assert {k: v for k, v in cloud.items() if k not in drop} == {
        k: v for k, v in local.items() if k not in drop
    }


def test_streamlit_pinned_the_same_everywhere():
    versions = {name: parse(name)[0]["streamlit"] for name in
                ("requirements.txt", "requirements-local.txt", "requirements-dev.txt")}  # fmt: skip
    assert len(set(versions.values())) == 1, versions


def test_dev_builds_on_the_local_set():
    text = (ROOT / "requirements-dev.txt").read_text().splitlines()
    assert "-r requirements-local.txt" in text
    dev, _ = parse("requirements-dev.txt")
    local, _ = parse("requirements-local.txt")
    assert local.items() <= dev.items()
    assert {"pytest", "ruff", "playwright"} <= set(dev)


def test_cloud_reads_requirements_txt_and_no_earlier_dependency_file():
    """Cloud takes the first of uv.lock, Pipfile, environment.yml, requirements.txt,
    pyproject.toml it finds (in the entrypoint's folder, then the root): pyproject.toml is
    here too, so requirements.txt must exist and nothing before it."""
    assert (ROOT / "requirements.txt").is_file()
    for earlier in ("uv.lock", "Pipfile", "environment.yml", "environment.yaml"):
        assert not (ROOT / earlier).exists(), f"Cloud would install {earlier} instead"


def test_packages_txt_names_graphviz():
    lines = [
        line.strip()
        for line in (ROOT / "packages.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert "graphviz" in lines


def test_config_suits_a_public_app():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server, client, browser = config["server"], config["client"], config["browser"]
    assert server["headless"] is True
    assert server["fileWatcherType"] == "none"
    assert server.get("runOnSave", False) is False
    assert server.get("enableXsrfProtection", True) is True
    assert server["maxUploadSize"] <= 50  # MB: weights files only; Cloud has little memory
    assert browser["gatherUsageStats"] is False
    assert client["showErrorDetails"] == "none"
    assert client["toolbarMode"] == "viewer"
    assert config.get("global", {}).get("developmentMode", False) is False
    # A full collection after every page run was most of the server's CPU per run
    # (bench/class_load.py); Python's generational collector runs without it.
    assert config["runner"]["postScriptGC"] is False


def test_setup_script_installs_each_set():
    script = (ROOT / "scripts" / "setup.sh").read_text()
    assert "-r requirements-local.txt" in script  # the default
    assert "-r requirements.txt" in script  # --cpu
    assert "-r requirements-dev.txt" in script  # --dev
    makefile = (ROOT / "Makefile").read_text()
    assert "scripts/setup.sh --cpu" in makefile and "run-cpu:" in makefile
