"""The conv and depthwise (also in place; both, and the average pool, also built with only the code
paths each case takes), linear, add and mul kernel variants (int8 and int16; the 16x16 conv and
linear too), the
int16 activation kernel, quantize_per_tensor (also in place over its float input) and the int8 mean on
emulated cores, bit-identical with
their references:
tests/target/kernel_variants.cc built for each core (MVE on the M55, DSP on the M4 and the M33) by
scripts/run_kernel_variants.sh and run under qemu-system-arm. The first run of a core builds it.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")


@pytest.mark.parametrize("cpu,variant", [("cortex-m55", "MVE"), ("cortex-m4", "DSP"), ("cortex-m33", "DSP")])
def test_kernel_variants_match_the_references_on_the_target(cpu, variant):
    proc = subprocess.run([str(ROOT / "scripts" / "run_kernel_variants.sh"), cpu, "3", "60"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"kernel variants: {variant},"), proc.stdout
    for kernel in ("quantized_conv2d", "quantized_conv2d in place", "quantized_depthwise_conv2d",
                   "quantized_depthwise_conv2d in place",
                   "quantized_linear", "quantized_add",
                   "quantized_mul", "quantized_conv2d_s16", "quantized_linear_s16", "quantized_conv2d_s16w16",
                   "quantized_linear_s16w16", "quantized_add_s16",
                   "quantized_mul_s16", "quantized_activation_s16", "quantize_per_tensor",
                   "quantize_per_tensor in place", "quantized_mean",
                   "quantized_conv2d on its own paths", "quantized_depthwise_conv2d on its own paths",
                   "quantized_avg_pool2d on its own paths"):
        assert f"ok     {kernel}: 60 cases, 0 failures" in proc.stdout, proc.stdout
