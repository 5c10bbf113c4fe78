# The README's two commands: `make demo` and `make test`. Both run the set-up first.
PY := .venv/bin/python
JOBS ?= $(shell nproc)
CROSS_PRESETS := cortex-m55 cortex-m4 cortex-m0plus

.PHONY: setup pyinstall demo test ctest pytest cross qemu qemu-all bench bench-target sanitize fuzz clean

setup:
	@bash scripts/setup.sh

# Rebuild and reinstall only the cortexm package into .venv (after setup has run once).
pyinstall:
	flock /tmp/cortexm-pip.lock $(PY) -m pip install -q --no-build-isolation --no-deps .

# The main job: lower a zoo model with the AOT CLI (quantize, lower, plan, write with bundled IO),
# then run the program file on the host runtime and verify it against its bundled outputs.
DEMO_MODEL ?= ds_cnn
demo: setup
	@mkdir -p build/demo
	$(PY) -m cortexm.aot --model $(DEMO_MODEL) --target cortex-m55+int8 --quantize --bundleio \
	  --output build/demo/$(DEMO_MODEL).cmpte
	$(PY) -m cortexm.run build/demo/$(DEMO_MODEL).cmpte --profile

test: setup ctest pytest cross

ctest:
	cmake --preset host
	cmake --build --preset host -j $(JOBS)
	ctest --preset host

pytest:
	$(PY) -m pytest -q --durations=25

cross:
	@for p in $(CROSS_PRESETS); do \
	  cmake --preset $$p >/dev/null && cmake --build --preset $$p -j $(JOBS) && \
	    bash scripts/check_freestanding.sh build/$$p/kernels/libcortexm_kernels.a || exit 1; \
	  echo "cross build $$p: ok"; \
	done

# The C++ suites under ASan + UBSan (clang, -fno-sanitize-recover=undefined): any report fails the run.
# Not part of `make test` yet (it rebuilds the whole tree instrumented).
CCACHE := $(shell command -v ccache)
LAUNCHER := $(if $(CCACHE),-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
NEED_CLANG = @command -v clang++ >/dev/null || { echo "$@ needs clang: apt-get install clang"; exit 1; }
sanitize:
	$(NEED_CLANG)
	cmake --preset host-asan $(LAUNCHER)
	cmake --build --preset host-asan -j $(JOBS)
	ctest --preset host-asan -j $(JOBS)

# libFuzzer on the program loader (+ run) and the graph file reader, FUZZ_SECONDS each, seeded with
# the stored corpora; new inputs go to build/host-fuzz/corpus, crashes to build/host-fuzz/crash-*.
FUZZ_SECONDS ?= 60
fuzz:
	$(NEED_CLANG)
	cmake --preset host-fuzz $(LAUNCHER)
	cmake --build --preset host-fuzz -j $(JOBS) --target program_fuzzer graph_fuzzer
	@mkdir -p build/host-fuzz/corpus/program build/host-fuzz/corpus/graph
	cd build/host-fuzz && ./tests/fuzz/program_fuzzer -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	  -artifact_prefix=crash-program- corpus/program ../../tests/fuzz/corpus/program ../../tests/py/data/program_corpus
	cd build/host-fuzz && ./tests/fuzz/graph_fuzzer -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	  -artifact_prefix=crash-graph- corpus/graph ../../tests/fuzz/corpus/graph

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

clean:
	rm -rf build .venv
