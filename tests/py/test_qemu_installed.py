"""QEMU from an installed package: outside any checkout, `python -m cortexm.run --qemu cortex-m55`
builds the runner from the firmware sources the package ships (cortexm/firmware_source) into the
user's cache, says so while it builds, and runs the program bit-exact with the host runtime."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cortexm

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("qemu-system-arm", "arm-none-eabi-g++", "cmake", "ninja", "flatc")),
    reason="needs qemu-system-arm, the arm-none-eabi toolchain, cmake, ninja and flatc (scripts/setup.sh)")


def installed_package(tmp_path: Path) -> Path:
    """The directory holding an installed cortexm package: this one when it ships firmware_source
    (pip install), else one made like pip makes it from the CMake build of this _core (a checkout's
    dev build: its install rules, then the Python sources)."""
    package = Path(cortexm.__file__).resolve().parent
    if (package / "firmware_source" / "firmware" / "CMakeLists.txt").is_file():
        return package.parent
    core = Path(cortexm._core.__file__)
    build = core.resolve().parents[1]
    if not core.is_symlink() or not (build / "CMakeCache.txt").is_file():
        pytest.skip("cortexm is neither an installed package nor a checkout's CMake build")
    site = tmp_path / "site"
    subprocess.run(["cmake", "--install", str(build), "--prefix", str(site / "cortexm")], check=True,
                   stdout=subprocess.DEVNULL)
    shutil.copytree(package, site / "cortexm", dirs_exist_ok=True, symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "_core*.so", "program.fbs"))
    return site


def test_run_on_qemu_outside_the_checkout(tmp_path):
    site = installed_package(tmp_path)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 3 * 3, 3)).eval()
    calibration = [(torch.randn(1, 2, 5, 5),) for _ in range(4)]
    graph = cortexm.quantize(cortexm.export(model, calibration[0]), calibration, progress=False)
    program = cortexm.to_program(cortexm.lower(graph), bundle_inputs=calibration[0])
    path = tmp_path / "model.cmpte"
    program.save(path)

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CORTEXM_SOURCE_DIR")}
    env["PYTHONPATH"] = str(site)
    env["CORTEXM_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-m", "cortexm.run", "--qemu", "cortex-m55", str(path)], cwd=outside,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cortexm: building cortexm_runner for cortex-m55" in done.stderr
    assert "compare: outputs on cortex-m55 bit-exact with the host runtime" in done.stdout
    assert (tmp_path / "cache").is_dir()
    # The checkout-only firmware (the target tests) says what it needs instead of failing to build.
    probe = subprocess.run(
        [sys.executable, "-c", "from cortexm import qemu; qemu.build_firmware('cortex-m55', 'cortexm_kernel_tests')"],
        cwd=outside, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert probe.returncode != 0 and "builds from a cortexm checkout" in probe.stderr


def test_a_missing_tool_is_one_line_naming_the_package(tmp_path, monkeypatch, capsys):
    from cortexm import qemu

    monkeypatch.setattr(qemu.shutil, "which", lambda name: None if name == "qemu-system-arm" else "/bin/true")
    program = cortexm.to_program(cortexm.lower(cortexm.quantize(
        cortexm.export(torch.nn.Linear(3, 2).eval(), (torch.randn(1, 3),)), [(torch.randn(1, 3),)] * 2,
        progress=False)), bundle_inputs=(torch.randn(1, 3),))
    from cortexm import run

    path = tmp_path / "m.cmpte"
    program.save(path)
    assert run.main([str(path), "--qemu", "cortex-m55"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == ("error: qemu-system-arm is not installed: install it with `apt-get install "
                           "qemu-system-arm` (in a checkout, scripts/setup.sh installs everything)")
