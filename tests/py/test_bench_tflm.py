"""bench/tflm_bench.py, TFLite Micro + CMSIS-NN beside cortexm (make bench-tflm, docs/performance.md).

Always (no build): a difference in any output byte fails the bench naming the model, output and
byte; a flatbuffers tree of another version than TFLM's schema asserts is refused naming the tag
to check out; make bench-tflm without the source directories says it skipped and what to set.
With the source trees (TFLITE_MICRO_DIR, CMSIS_NN_DIR, FLATBUFFERS_DIR, GEMMLOWP_DIR) and
MLPERF_TINY_DIR set: kws_ref_model builds and runs on QEMU's M55 with identical outputs and a
table row that parses (the first build of TFLM and CMSIS-NN takes minutes; later ones reuse
build/bench-tflm).
"""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ["TFLITE_MICRO_DIR", "CMSIS_NN_DIR", "FLATBUFFERS_DIR", "GEMMLOWP_DIR", "MLPERF_TINY_DIR"]


def load_bench():
    spec = importlib.util.spec_from_file_location("tflm_bench", ROOT / "bench" / "tflm_bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_differing_output_byte_fails_the_bench_naming_it():
    bench = load_bench()
    same = [bytes([1, 2, 3]), bytes([250, 7])]
    bench.check_identical("m", "cortex-m55", same, list(same))
    with pytest.raises(bench.BenchError, match=r"^m on cortex-m4: cortexm's output 1 differs from TFLM's on the same "
                                               r"input from byte 1 \(2 bytes from TFLM, 2 from cortexm\)"):
        bench.check_identical("m", "cortex-m4", same, [same[0], bytes([250, 6])])
    with pytest.raises(bench.BenchError, match="from byte 2 \\(2 bytes from TFLM, 3 from cortexm\\)"):
        bench.check_identical("m", "cortex-m4", same, [same[0], bytes([250, 7, 0])])
    with pytest.raises(bench.BenchError, match="TFLM gave 2 outputs, cortexm 1"):
        bench.check_identical("m", "cortex-m4", same, same[:1])


def fake_tree(path: Path, files: dict) -> str:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return str(path)


def test_a_flatbuffers_tree_of_another_version_is_refused_naming_the_tag(tmp_path):
    bench = load_bench()
    schema = ("static_assert(FLATBUFFERS_VERSION_MAJOR == 25 &&\n              FLATBUFFERS_VERSION_MINOR == 9 &&\n"
              "              FLATBUFFERS_VERSION_REVISION == 23,\n             \"Non-compatible flatbuffers\");\n")
    base = ("#define FLATBUFFERS_VERSION_MAJOR {}\n#define FLATBUFFERS_VERSION_MINOR {}\n"
            "#define FLATBUFFERS_VERSION_REVISION {}\n")
    args = type("Args", (), {})()
    args.tflm_dir = fake_tree(tmp_path / "tflm", {"tensorflow/lite/micro/micro_interpreter.h": "",
                                                  "tensorflow/lite/schema/schema_generated.h": schema})
    args.cmsis_nn_dir = fake_tree(tmp_path / "cmsis-nn", {"Include/arm_nnfunctions.h": ""})
    args.gemmlowp_dir = fake_tree(tmp_path / "gemmlowp", {"fixedpoint/fixedpoint.h": ""})
    args.flatbuffers_dir = fake_tree(tmp_path / "fb", {"include/flatbuffers/base.h": base.format(25, 12, 19)})
    with pytest.raises(bench.BenchError, match=r"is flatbuffers 25\.12\.19; TFLM's schema_generated.h needs 25\.9\.23: "
                                               r"check out its tag v25\.9\.23"):
        bench.check_dirs(args)
    args.gemmlowp_dir = str(tmp_path / "nowhere")
    with pytest.raises(bench.BenchError,
                       match="--gemmlowp-dir .*nowhere: not a source tree with fixedpoint/fixedpoint.h"):
        bench.check_dirs(args)


def test_make_bench_tflm_without_the_directories_skips_saying_what_to_set():
    env = {k: v for k, v in os.environ.items() if k not in SOURCE_DIRS + ["TFLM_DIR", "MODELS_DIR"]}
    proc = subprocess.run(["make", "-s", "--no-print-directory", "bench-tflm"], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.startswith("bench-tflm: skipped: set TFLITE_MICRO_DIR (tflite-micro), CMSIS_NN_DIR"), proc.stdout
    assert "MLPERF_TINY_DIR" in proc.stdout


@pytest.mark.skipif(any(not os.environ.get(d) for d in SOURCE_DIRS),
                    reason=f"needs {', '.join(SOURCE_DIRS)} (source trees and the MLPerf Tiny .tflite files)")
@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
def test_kws_on_the_m55_gives_identical_outputs_and_a_table_row():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "tflm_bench.py"), "--cpu", "cortex-m55",
                           "kws_ref_model"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=3600,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "kws_ref_model on cortex-m55: outputs identical" in proc.stderr
    rows = [line.split("|")[1:-1] for line in proc.stdout.splitlines() if line.startswith("| kws_ref_model |")]
    assert len(rows) == 1, proc.stdout
    cells = [c.strip() for c in rows[0]]
    assert cells[:2] == ["kws_ref_model", "M55"]
    numbers = [int(c.replace(",", "")) for c in (cells[2], cells[3], cells[5], cells[6], cells[8], cells[9])]
    assert all(n > 0 for n in numbers), cells
    assert float(cells[4]) == pytest.approx(numbers[1] / numbers[0], abs=0.006)
    assert float(cells[7]) == pytest.approx(numbers[3] / numbers[2], abs=0.006)
    assert float(cells[10]) == pytest.approx(numbers[5] / numbers[4], abs=0.006)
