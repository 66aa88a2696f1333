# Two commands do all set-up on a fresh machine: `make run` (the main job) and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TORCH  ?= torch==2.13.0

.PHONY: setup run test lint notebooks clean

setup: $(STAMP)

# Idempotent: the venv is made once; torch (the CPU wheel these machines carry) only when
# the venv has none; the package again only when pyproject.toml changed.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[test]"
	@touch $(STAMP)

run: setup
	$(BIN)/kbt build ops -o build

test: setup
	$(BIN)/python -m pytest -n 2 -q

lint: setup
	$(BIN)/kbt lint

notebooks: setup
	$(BIN)/kbt notebooks -o build/notebooks

clean:
	rm -rf build
