#!/usr/bin/env bash
# Set up gradviz on a fresh machine: system packages (when run as root and missing),
# a virtual environment in .venv, and the Python packages. Safe to run again.
#   scripts/setup.sh          runtime packages (requirements-local.txt: PyPI's torch, the CUDA
#                             build on Linux, which uses an NVIDIA GPU when there is one)
#   scripts/setup.sh --dev    plus test tools and the browser for end-to-end tests
#   scripts/setup.sh --cpu    the CPU-only set Community Cloud installs (requirements.txt:
#                             torch and torchvision from PyTorch's CPU index, Linux and Windows)
set -euo pipefail
cd "$(dirname "$0")/.."
DEV=0
CPU=0
for arg in "$@"; do
  case "$arg" in
    --dev) DEV=1 ;;
    --cpu) CPU=1 ;;
    *) echo "usage: scripts/setup.sh [--dev | --cpu]" >&2; exit 2 ;;
  esac
done
if [ "$DEV" = 1 ] && [ "$CPU" = 1 ]; then
  echo "setup: --dev installs the local set the tests run on; use --dev or --cpu, not both" >&2
  exit 2
fi
PYTHON=${PYTHON:-python3}

need=()
command -v dot >/dev/null 2>&1 || need+=(graphviz)
if [ "$DEV" = 1 ] && [ ! -x /usr/bin/chromium ]; then need+=(chromium fonts-dejavu-core); fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: optional system packages missing: ${need[*]} (install them with your package manager;"
    echo "       without graphviz the app still draws graphs, only SVG/PNG/PDF export needs it)"
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if [ "$DEV" = 1 ]; then
  .venv/bin/python -m pip install -q -r requirements-dev.txt
elif [ "$CPU" = 1 ]; then
  .venv/bin/python -m pip install -q -r requirements.txt
else
  .venv/bin/python -m pip install -q -r requirements-local.txt
fi
.venv/bin/python -m pip install -q --no-deps -e .
echo "setup: ready ($(.venv/bin/python -c 'import torch; print("torch", torch.__version__)'))"
