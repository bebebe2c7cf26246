#!/usr/bin/env bash
# Builds the Python package's wheel in a fresh virtual environment, installs it with
# numpy and pytest, and runs the tests and the README's examples. Usage, from anywhere:
#   bash python/test.sh
set -euo pipefail
cd "$(dirname "$0")"
venv="${REDLAB_PY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/redlab-ci/venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# numpy 2 for the examples: they show numpy 2 reprs (np.float32(55.0)).
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" "numpy>=2" "pytest>=7"
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
"$venv/bin/maturin" build --release --locked -o "$wheels"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheels"/redlab-*.whl
"$venv/bin/pytest" -q
