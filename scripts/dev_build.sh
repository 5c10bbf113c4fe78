#!/usr/bin/env bash
# Developer loop without reinstalling: build the extension, the gtests and the benches in build/dev
# and link the extension into python/cortexm, so `PYTHONPATH=python .venv/bin/python -m pytest`
# runs this tree. Usage: scripts/dev_build.sh [ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}  # objects shared between worktrees
PY=${PY:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=$(git rev-parse --path-format=absolute --git-common-dir)/../.venv/bin/python
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f build/dev/build.ninja ]; then
  cmake -S . -B build/dev -G Ninja -DCORTEXM_BUILD_PYTHON=ON "${launcher[@]}" \
    -DPython_EXECUTABLE="$PY" -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)" >/dev/null
fi
cmake --build build/dev -- "$@"
for so in build/dev/src/_core*.so build/dev/generated/program/program.fbs; do
  ln -sf "$ROOT/$so" python/cortexm/
done
