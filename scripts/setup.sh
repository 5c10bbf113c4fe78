#!/usr/bin/env bash
# Idempotent set-up: Debian packages that pip cannot provide, then .venv with cortexm and its extras.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build python3 python3-venv python3-dev libpthreadpool-dev
  libgtest-dev libbenchmark-dev libxnnpack-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
  flatbuffers-compiler libflatbuffers-dev nlohmann-json3-dev qemu-system-arm
  espeak-ng sox
  clang libclang-rt-14-dev  # with the ASan, UBSan and libFuzzer runtimes: make test-sanitize, make fuzz
  ccache  # the pip build's objects serve the host build (Makefile)
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
VPIP=(.venv/bin/python -m pip --disable-pip-version-check -q)
# This machine's pip config names local indexes that may be absent; their warnings are noise.
pip_install() {
  "${VPIP[@]}" install "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
}
# Build requirements live in the venv so the extension builds incrementally without isolation.
pip_install "scikit-build-core>=0.10" "pybind11>=2.12" "cmake>=3.24" ninja
# torch is pinned in pyproject's extra: the CPU build on this machine, never an unpinned CUDA build.
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR=$PWD
  # The compilers CMake picks for the host build: ccache keys on the compiler's name, and
  # scikit-build-core would otherwise take Python's (g++).
  export CC=${CC:-cc} CXX=${CXX:-c++}
fi
pip_install --no-build-isolation ".[torch,test]"
# Silero VAD's real weights ship in this package; its own dependencies (torchaudio, onnxruntime) are
# not needed and torchaudio would not install beside this torch.
pip_install --no-deps "silero-vad==6.2.3"
# PT2E (prepare_pt2e / convert_pt2e) lives in torchao with torch 2.13; the tests quantize with it.
pip_install --no-deps "torchao==0.18.0"
