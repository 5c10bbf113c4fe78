# The README's two commands: `make demo` and `make test`. Both run the set-up first.
PY := .venv/bin/python
JOBS ?= $(shell nproc)
CROSS_PRESETS := cortex-m55 cortex-m4 cortex-m0plus
# ccache (set-up installs it) shares objects between this checkout's build trees: build/py (pip),
# build/host and build/dev compile the same sources with the same flags, and CCACHE_BASEDIR makes
# their paths relative. Looked up when a recipe runs, after set-up.
export CCACHE_BASEDIR := $(CURDIR)
CCACHE = $(shell command -v ccache)
LAUNCHER = $(if $(CCACHE),-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

.PHONY: setup pyinstall demo test ctest pytest cross qemu qemu-all bench bench-target bench-tflm test-sanitize sanitize test-sanitize-ci fuzz clean

setup:
	@bash scripts/setup.sh

# Rebuild and reinstall only the cortexm package into .venv (after setup has run once).
pyinstall:
	flock /tmp/cortexm-pip.lock $(PY) -m pip install -q --no-build-isolation --no-deps .

# The main job: the spoken-digit model (trained weights shipped in the package) through the AOT CLI
# (quantize, lower, plan, write with bundled IO), the program verified against its bundled outputs
# on the host, then a digit said by espeak-ng heard by the program on the host and on QEMU's M55.
demo: setup
	@mkdir -p build/demo
	$(PY) -m cortexm.aot --model kws_digits --target cortex-m55+int8 --quantize --bundleio \
	  --output build/demo/kws_digits.cmpte
	$(PY) -m cortexm.run build/demo/kws_digits.cmpte --profile
	$(PY) -m cortexm.demo build/demo/kws_digits.cmpte --word $(DEMO_WORD)
DEMO_WORD ?= seven

test: setup ctest pytest cross test-sanitize-ci

ctest:
	cmake --preset host $(LAUNCHER)
	cmake --build --preset host -j $(JOBS)
	ctest --preset host -j $(JOBS)

# Tests in JOBS processes (pytest-xdist; module fixtures are built once per process).
pytest:
	$(PY) -m pytest -q -n $(JOBS) --durations=25

cross:
	@for p in $(CROSS_PRESETS); do \
	  cmake --preset $$p >/dev/null && cmake --build --preset $$p -j $(JOBS) && \
	    bash scripts/check_freestanding.sh build/$$p/kernels/libcortexm_kernels.a && \
	    bash scripts/check_freestanding.sh build/$$p/src/runtime/libcortexm_runtime.a || exit 1; \
	  echo "cross build $$p: ok"; \
	done

# ASan + UBSan (clang, -fno-sanitize-recover=undefined; preset host-asan, which also builds the
# libFuzzer harnesses of tests/fuzz from the same objects): any sanitizer report fails.
# test-sanitize builds and runs every C++ suite; SANITIZE_LABELS (ctest labels: the suites' names)
# limits it to some suites and SANITIZE_TARGETS to what they need.
NEED_CLANG = @command -v clang++ >/dev/null || { echo "$@ needs clang: apt-get install clang"; exit 1; }
SANITIZE_LABELS ?=
SANITIZE_TARGETS ?=
test-sanitize:
	$(NEED_CLANG)
	cmake --preset host-asan $(LAUNCHER)
	cmake --build --preset host-asan -j $(JOBS) $(if $(SANITIZE_TARGETS),--target $(SANITIZE_TARGETS))
	ctest --preset host-asan -j $(JOBS) $(if $(SANITIZE_LABELS),-L '$(SANITIZE_LABELS)')

sanitize: test-sanitize

# What `make test` runs under the sanitizers: the suites of the code that reads untrusted files
# (kernels, kernel variants, program loader + runtime, graph files) and the stored fuzz corpora,
# then a fuzz smoke run. The
# pass, planner and portable-kernel suites only re-test code these already reach; make
# test-sanitize runs them too.
CI_SANITIZE_TARGETS := kernel_tests kernel_variants_scalar kernel_variants_dsp_emulated program_tests graph_tests \
  program_fuzzer graph_fuzzer deep_graph_inputs
test-sanitize-ci:
	$(MAKE) test-sanitize SANITIZE_TARGETS="$(CI_SANITIZE_TARGETS)" \
	  SANITIZE_LABELS="kernel_tests|kernel_variants|program_tests|graph_tests|fuzz_corpus"
	$(MAKE) fuzz

# libFuzzer on the program loader (+ run; structure-aware mutator) and the graph file reader,
# FUZZ_SECONDS each, seeded with the stored corpora; new inputs go to build/host-asan/fuzz-corpus,
# crashes, leaks and sanitizer reports to build/host-asan/crash-* (and fail the target).
FUZZ_SECONDS ?= 60
FUZZ_RUN = ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fuzz:
	$(NEED_CLANG)
	cmake --preset host-asan $(LAUNCHER)
	cmake --build --preset host-asan -j $(JOBS) --target program_fuzzer graph_fuzzer
	@mkdir -p build/host-asan/fuzz-corpus/program build/host-asan/fuzz-corpus/graph
	cd build/host-asan && $(FUZZ_RUN) ./tests/fuzz/program_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=crash-program- \
	  fuzz-corpus/program ../../tests/fuzz/corpus/program ../../tests/py/data/program_corpus
	cd build/host-asan && $(FUZZ_RUN) ./tests/fuzz/graph_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=crash-graph- \
	  fuzz-corpus/graph ../../tests/fuzz/corpus/graph

# QEMU (docs/qemu.md): pytest above already runs tests/py/test_qemu.py, which builds the runners and
# the on-target kernel tests for the M55 and the M4; these targets run it alone, or with every zoo model and the portable suite.
qemu: setup
	$(PY) -m pytest -q tests/py/test_qemu.py

qemu-all: setup
	CORTEXM_QEMU_ALL=1 $(PY) -m pytest -q -s tests/py/test_qemu.py

bench: setup
	cmake --preset host
	cmake --build --preset host -j $(JOBS) --target kernel_bench
	./build/host/bench/kernel_bench
	PYTHONPATH= $(PY) bench/host_models.py

# Per-layer executed instructions (QEMU instruction count, not cycles) of the zoo models' int8 layers on the
# Cortex-M55 (MVE variant) and the Cortex-M4 (DSP variant), beside CMSIS-NN's when CMSIS_NN_DIR points
# at a CMSIS-NN source tree (git clone https://github.com/ARM-software/CMSIS-NN); fails when any
# layer's outputs differ. docs/performance.md.
BENCH_MODELS ?= ds_cnn mobilenet_v2_96 resnet8 wav2letter silero_vad
bench-target: setup
	$(PY) bench/qemu_layer_counts.py $(BENCH_MODELS:%=bench/shapes/%.txt) --run cortex-m55:mve --run cortex-m4:dsp

# Side by side on QEMU's M55 and M4: TFLite Micro + CMSIS-NN against cortexm on the MLPerf Tiny
# reference models (or BENCH_TFLM_MODELS, <name>.tflite files of MLPERF_TINY_DIR): executed
# instructions per inference, arena and firmware bytes; fails unless both give identical outputs.
# Reads the sources from the directories given (TFLM_DIR and MODELS_DIR are accepted too):
# tflite-micro, CMSIS-NN, flatbuffers (the version TFLM's schema names) and gemmlowp.
# docs/performance.md, "Against TFLite Micro".
TFLITE_MICRO_DIR ?= $(TFLM_DIR)
MLPERF_TINY_DIR ?= $(MODELS_DIR)
BENCH_TFLM_MODELS ?=
bench-tflm:
	@if [ -z "$(TFLITE_MICRO_DIR)" ] || [ -z "$(CMSIS_NN_DIR)" ] || [ -z "$(MLPERF_TINY_DIR)" ] || \
	    [ -z "$(FLATBUFFERS_DIR)" ] || [ -z "$(GEMMLOWP_DIR)" ]; then \
	  echo "bench-tflm: skipped: set TFLITE_MICRO_DIR (tflite-micro), CMSIS_NN_DIR (CMSIS-NN), FLATBUFFERS_DIR"; \
	  echo "  (flatbuffers at the version TFLM's schema_generated.h names), GEMMLOWP_DIR (gemmlowp) to source trees"; \
	  echo "  and MLPERF_TINY_DIR to the directory of the MLPerf Tiny .tflite files"; \
	else \
	  $(MAKE) setup && \
	  PYTHONPATH= $(PY) bench/tflm_bench.py --tflm-dir "$(TFLITE_MICRO_DIR)" --cmsis-nn-dir "$(CMSIS_NN_DIR)" \
	    --flatbuffers-dir "$(FLATBUFFERS_DIR)" --gemmlowp-dir "$(GEMMLOWP_DIR)" --models-dir "$(MLPERF_TINY_DIR)" \
	    --jobs $(JOBS) $(BENCH_TFLM_MODELS); \
	fi

clean:
	rm -rf build .venv
