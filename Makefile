# aisimulate build. Every target is idempotent; `make demo` and `make test` work on a
# fresh Debian 12 machine with Go 1.26 and Python 3.11 (see README.md).
SHELL     := /bin/bash
PYTHON    ?= python3
VENV      := $(CURDIR)/.venv
VPY       := $(VENV)/bin/python
TOOLS     := $(CURDIR)/.tools
PYCORE    := python/aisimulate/_core
GO_PKGS   := ./pybind
GO_SRC    := $(shell find core pybind -name '*.go' -not -name '*_test.go') core/version/VERSION go.mod go.sum
SO_STAMP  := $(PYCORE)/.stamp
export PATH := $(TOOLS):$(PATH)
export CGO_LDFLAGS_ALLOW := -fwrapv
export PYTHONPATH := $(CURDIR)/python

.PHONY: build venv testdeps tools test gotest fuzz pytest installcheck demo demo-data quickstart bench bench-10m goldens accuracy clean

build: $(SO_STAMP)

# The project virtualenv, from the machine's python3 (3.11): the build tools (pybindgen
# is needed by gopy) and the package itself, editable, with its core dependencies
# (pyproject.toml's [project] dependencies): what `make demo` and the package need.
# `.venv/bin/python -m aisimulate` works from anywhere; the native core is built by the
# rule below, which tracks the Go sources.
venv: $(VENV)/.stamp
$(VENV)/.stamp: pyproject.toml core/version/VERSION
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q "setuptools>=64" wheel "pybindgen>=0.22"
	AISIMULATE_SKIP_NATIVE=1 $(VPY) -m pip install -q --no-build-isolation -e .
	touch $@

# The test extras, into the same virtualenv, for `make test` and the research targets:
# pyproject.toml's `test` extra (pytest, Hypothesis, jsonschema, pandas, matplotlib, and
# the optional extras so that their tests run: Ray for sweep backend="ray", nbclient and
# ipykernel for the example notebook in a real kernel, ipywidgets for its progress bars).
testdeps: $(VENV)/.test-stamp
$(VENV)/.test-stamp: $(VENV)/.stamp pyproject.toml
	AISIMULATE_SKIP_NATIVE=1 $(VPY) -m pip install -q --no-build-isolation -e '.[test]'
	touch $@

# gopy and goimports, pinned in go.mod with the `tool` directive.
tools: $(TOOLS)/gopy
$(TOOLS)/gopy: go.mod go.sum
	GOBIN=$(TOOLS) go install tool
	touch $(TOOLS)/gopy $(TOOLS)/goimports

# The native extension, built as `pip install .` builds it (scripts/build_native.py: gopy
# into a staging folder, only the runtime files copied, gopy's os.chdir dropped).
$(SO_STAMP): $(GO_SRC) $(VENV)/.stamp $(TOOLS)/gopy scripts/build_native.py
	$(VPY) scripts/build_native.py $(PYCORE) --tools $(TOOLS)
	$(VPY) -c 'import aisimulate._core.pybind'
	touch $@

# What a user does: build the wheel in a fresh venv (PEP 517, isolated), install it in
# another fresh venv, and replay the quickstart from outside the checkout. Repeated only
# when the package's sources change.
INSTALL_SRC := $(GO_SRC) setup.py pyproject.toml MANIFEST.in scripts/build_native.py \
	$(shell find python/aisimulate -name '*.py' -not -path '*/_core/*')
installcheck: _build/installcheck.stamp
_build/installcheck.stamp: $(INSTALL_SRC)
	scripts/installcheck.sh
	mkdir -p _build && touch $@

# gofmt -l lists every Go file whose formatting differs from gofmt's; any is a failure.
gotest:
	@out=$$(gofmt -l core pybind); if [ -n "$$out" ]; then echo "gofmt: not formatted (run gofmt -w):"; echo "$$out"; exit 1; fi
	go vet ./...
	go test ./...

# Fuzz every reader and config entry point for a bounded time each (go test runs
# their committed seeds on every `go test`; this explores beyond them). A failure
# writes the input to the package's testdata/fuzz/ to keep once fixed.
FUZZTIME ?= 3s
FUZZ_TARGETS := core/config:FuzzDecode core/config:FuzzDecodeYAML core/model:FuzzParse \
	core/hardware:FuzzReadYAML core/perf/aic:FuzzTable core/workload:FuzzMooncake \
	core/workload:FuzzAzure core/workload:FuzzLLMServingSim core/workload:FuzzScanRow core/replay:FuzzRun pybind:FuzzNormalize
fuzz:
	@scripts/fuzz.sh $(FUZZTIME) $(FUZZ_TARGETS)

pytest: build testdeps
	$(VPY) -m pytest -q tests

test: gotest fuzz pytest installcheck

# The demo reads the Mooncake trace from the shared data next to the checkout
# (../shared/data), or from AISIMULATE_DATA, the data folder README.md's "Models and
# systems" names (`make demo AISIMULATE_DATA=/path/to/shared/data` in a clone elsewhere).
# demo-data looks for the trace before the build: a clone without it learns so at once,
# not after compiling the native core.
AISIMULATE_DATA ?= $(CURDIR)/../shared/data
DEMO_TRACE := $(abspath $(AISIMULATE_DATA))/traces/mooncake/conversation_trace.jsonl
demo: demo-data build
	$(VENV)/bin/aisimulate replay examples/mooncake-qwen3-32b-h100.yaml --set traffic.source.path=$(DEMO_TRACE)

demo-data:
	@test -f "$(DEMO_TRACE)" || { echo "make demo: the Mooncake trace is not at $(DEMO_TRACE): give the folder of the shared data (make demo AISIMULATE_DATA=/path/to/shared/data), or run make quickstart, which needs no data files" >&2; exit 2; }

quickstart: build
	$(VENV)/bin/aisimulate replay examples/quickstart.yaml

# Re-pin the parity goldens (tests/goldens/*.json) on purpose; say why in the commit.
goldens:
	AISIMULATE_UPDATE_GOLDENS=1 go test ./core/perf/parity/ -run TestParityGoldens -count=1

# Accuracy against the silicon dev rows, both perf sources (out/accuracy-*/).
accuracy: build testdeps
	$(VPY) scripts/accuracy.py --silicon ../shared/data/silicon/vllm_dense_dev.csv --perf aic --out out/accuracy-aic
	$(VPY) scripts/accuracy.py --silicon ../shared/data/silicon/vllm_dense_dev.csv --perf roofline --out out/accuracy-roofline
	$(VPY) scripts/accuracy.py --silicon ../shared/data/silicon/vllm_moe_dev.csv --perf aic --out out/accuracy-moe-aic
	$(VPY) scripts/accuracy.py --silicon ../shared/data/silicon/vllm_moe_dev.csv --perf roofline --out out/accuracy-moe-roofline

# Go micro and replay benchmarks, then whole replays through the Python API
# (docs/benchmarks.md records the results and the machine).
bench: build testdeps
	go test -p 1 -run '^$$' -bench . -benchmem -benchtime 3x ./core/...
	$(VPY) scripts/bench.py
	$(VPY) scripts/bench_startup.py
	$(VPY) scripts/bench_sweep.py --ray
	$(VPY) scripts/bench_search.py

# Ten million requests (closed loop and Poisson, records held and streamed), each in a
# fresh process: CPU s, peak RSS. Opt-in: about 5 minutes of CPU (docs/benchmarks.md).
bench-10m: build testdeps
	$(VPY) scripts/bench_10m.py

clean:
	rm -rf _build $(PYCORE) $(TOOLS)
