#!/usr/bin/env bash
# Builds the kernel-variant checks (tests/target) for a Cortex-M core and runs them under QEMU.
# Usage: scripts/run_kernel_variants.sh CPU [SEED] [CASES] [KERNEL_ISA]
#   CPU: cortex-m3 | cortex-m4 | cortex-m7 | cortex-m33 | cortex-m55
#   KERNEL_ISA: empty (the richest variant the core has), 0 scalar, 1 DSP, 2 MVE
# Exit code 0 when every case matched its reference bit for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
cpu=${1:?usage: $0 CPU [SEED] [CASES] [KERNEL_ISA]}
seed=${2:-1}
cases=${3:-200}
isa=${4:-}
case $cpu in
  cortex-m3) machine=mps2-an385 ;;
  cortex-m4) machine=mps2-an386 ;;
  cortex-m7) machine=mps2-an500 ;;
  cortex-m33) machine=mps2-an505 ;;
  cortex-m55) machine=mps3-an547 ;;
  *) echo "unknown cpu $cpu" >&2; exit 2 ;;
esac
build=build/kernel-variants-$cpu${isa:+-isa$isa}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Build output only when the build fails, so stdout is the checks' report.
quiet() {
  local log
  if ! log=$("$@" 2>&1); then
    echo "$log" >&2
    exit 1
  fi
}
if [ ! -f "$build/build.ninja" ]; then
  quiet cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake \
    -DCORTEXM_CPU="$cpu" -DCORTEXM_KERNELS_ONLY=ON -DCORTEXM_BUILD_FIRMWARE=ON \
    -DCMAKE_BUILD_TYPE=Release -DCORTEXM_KERNEL_ISA="$isa" "${launcher[@]}"
fi
quiet cmake --build "$build" --target kernel_variants -- -j2
# QEMU writes the semihosting console to stderr; the report goes to stdout.
exec qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
  -semihosting-config "enable=on,target=native,arg=kernel_variants,arg=$seed,arg=$cases" \
  -kernel "$build/tests/target/kernel_variants.elf" 2>&1
