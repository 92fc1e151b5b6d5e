# Two entry points on a fresh machine: `make demo` and `make test` (each creates .venv).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CORPUS ?= $(wildcard ../shared/data/spamassassin-public-corpus.tgz)
export STREAMNB_SPAMASSASSIN ?= $(if $(CORPUS),$(abspath $(CORPUS)),)
# The TREC 2007 corpus (research use only, never in the repository) and 20 Newsgroups, when beside the checkout.
TREC ?= $(wildcard ../shared/data/trec07p-dev.tar.xz)
export STREAMNB_TREC07P ?= $(if $(TREC),$(abspath $(TREC)),)
TREC_FEEDBACK ?= $(wildcard ../shared/data/trec07p-dev-feedback.tar.xz)
export STREAMNB_TREC07P_FEEDBACK ?= $(if $(TREC_FEEDBACK),$(abspath $(TREC_FEEDBACK)),)
NEWSGROUPS ?= $(wildcard ../shared/data/20news-bydate.jsonl.gz)
export STREAMNB_20NEWS ?= $(if $(NEWSGROUPS),$(abspath $(NEWSGROUPS)),)

.PHONY: demo test docs wheel smoke-wheel bench bench-smoke bench-classic bench-smoothing clean

# The Rust core (src/) is compiled by maturin when the package is installed; any change to
# it reinstalls (an editable install, but the extension module is a build product).
CORE_SOURCES := Cargo.toml Cargo.lock $(shell find src -name '*.rs' 2>/dev/null)

$(VENV)/.installed-%: pyproject.toml $(CORE_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$*]"
	touch $@

demo: $(VENV)/.installed-plots
	$(VENV)/bin/streamnb demo --out demo-output

test: $(VENV)/.installed-dev
	cargo fmt --check
	cargo clippy --quiet --locked --features python --all-targets -- -D warnings
	cargo test --quiet --locked
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -q

# The docs site (mkdocs.yml, docs/; the dev extra holds the docs extra): strict, so a broken link or reference fails the build.
docs: $(VENV)/.installed-dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# An abi3 wheel (CPython >= 3.10) for manylinux2014, glibc >= 2.17, so also for manylinux_2_28
# systems, in dist/: built with the host's cargo, linked by zig (the ziglang package, in its own
# build venv) against glibc 2.17's symbols; no Docker. WHEEL_COMPAT=manylinux_2_28 for that tag.
WHEEL_VENV := .venv-wheel
WHEEL_TOOLS ?= maturin==1.16.0 ziglang==0.17.1
WHEEL_COMPAT ?= manylinux2014
# WHEEL_FLAGS=--strip: no line tables nor symbols, a 1 MB wheel instead of 3.6 MB
WHEEL_FLAGS ?=

$(WHEEL_VENV)/.installed: Makefile
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install --quiet $(WHEEL_TOOLS)
	touch $@

wheel: $(WHEEL_VENV)/.installed
	rm -f dist/streamnb-*.whl
	PATH="$(abspath $(WHEEL_VENV))/bin:$$PATH" maturin build --release --locked --zig \
		--compatibility $(WHEEL_COMPAT) --out dist $(WHEEL_FLAGS)

# The wheel installed in a fresh venv with no Rust on PATH, outside the checkout: train, classify, serve PING.
smoke-wheel: wheel
	bash tests/smoke_wheel.sh dist/streamnb-*.whl

bench: $(VENV)/.installed-dev
	$(PY) -m benchmarks

bench-smoke: $(VENV)/.installed-dev
	$(PY) -m benchmarks --quick

# bogofilter, spamprobe and SpamAssassin's Bayes on the stream (installs their Debian packages as root when missing)
bench-classic: $(VENV)/.installed-dev
	$(PY) -m benchmarks --only classic

# alpha="auto" against every fixed alpha: 20 Newsgroups, SpamAssassin, and trec07p-dev when
# STREAMNB_TREC07P names it (research use only: never copied into the repository)
bench-smoothing: $(VENV)/.installed-dev
	$(PY) -m benchmarks --only smoothing

clean:
	rm -rf $(VENV) $(WHEEL_VENV) dist site .pytest_cache .hypothesis target streamnb/_core*.so
