# Two commands do all set-up on a fresh machine: `make run` (the main job) and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TORCH  ?= torch==2.13.0

.PHONY: ascend-env setup run test lint notebooks site browser lab lab-extension clean gpu-check examples

setup: $(STAMP)

# Idempotent: the venv is made once; torch (the CPU wheel these machines carry) only when
# the venv has none; the package again only when pyproject.toml changed. The comparison loops
# for the legs TTK's Promote produces are compiled once there (numba's cache), a line per unit,
# as an install builds an extension; other dtype combinations compile on their first use.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[test]"
	$(BIN)/python -m kb_tools.numerics.precompile
	@$(MAKE) --no-print-directory ascend-env
	@touch $(STAMP)

# triton-ascend is also the `triton` package, so it gets an environment of its own: no pip, no
# second torch; a .pth file adds the main environment's site-packages after its own, so its own
# triton wins and torch, ipykernel and kb_tools come from .venv. Pins as environment.yml's.
ASCEND_SITE := .venv-ascend/lib/python3.11/site-packages
ascend-env:
	@test -x .venv-ascend/bin/python || $(PYTHON) -m venv --without-pip .venv-ascend
	$(BIN)/python -m pip install -q --no-deps --upgrade --target $(ASCEND_SITE) triton-ascend==3.2.0 pybind11==3.1.0
	@echo "import site; site.addsitedir('$(CURDIR)/$(BIN:/bin=)/lib/python3.11/site-packages')" > $(ASCEND_SITE)/zz_opkb_main_env.pth

# The main job: selections and usage skeletons for the catalog, the executed notebooks,
# and the static site that puts them together (open build/site/index.html).
run: setup
	$(BIN)/kbt build ops -o build
	@# The executed notebooks and one executed design-review notebook per catalog operator run side
	@# by side, each in kernels of its own (two cores: neither waits for the other's stragglers). A
	@# failing notebook stops the build; a review's exit 1 (a check did not pass, e.g. no wrapper: in
	@# the spec) is the review's content, 2 (it could not run) stops the build.
	@echo "$(BIN)/kbt notebooks -o build/notebooks & kbt review ops/*.yaml --format notebook --execute (two at a time)"
	@$(BIN)/kbt notebooks -o build/notebooks & notebooks=$$!; \
	  ls ops/*.yaml | xargs -P 2 -I{} sh -c '$(BIN)/kbt review {} --format notebook --execute \
	    -o build/notebooks/reviews/$$(basename {} .yaml).ipynb; status=$$?; [ $$status -le 1 ] || exit 255'; \
	  reviews=$$?; wait $$notebooks; ran=$$?; [ $$ran -eq 0 ] && [ $$reviews -eq 0 ]
	$(BIN)/kbt site -o build/site --notebooks build/notebooks

# Two workers; a module with a costly module fixture (the site, the Triton cases, a browser or a
# JupyterLab server) keeps its tests on one worker (xdist_group), so the fixture is built once.
test: setup browser
	$(BIN)/python -m pytest -n 2 -q --dist loadgroup

lint: setup
	$(BIN)/kbt lint

notebooks: setup
	$(BIN)/kbt notebooks -o build/notebooks

site: setup
	$(BIN)/kbt site -o build/site --notebooks build/notebooks

# After editing a page: re-select every worked example (examples/<op>/ for each ops/<op>.yaml)
# and merge its usage skeleton (claims are kept; new records appear unfilled for you to fill,
# and `kbt verify` says which). Every example is refreshed even when an earlier one fails.
examples: setup
	@status=0; for spec in ops/*.yaml; do op=$$(basename $$spec .yaml); \
	  if [ ! -d examples/$$op ]; then echo "make examples: $$spec has no examples/$$op/ yet; skipped"; continue; fi; \
	  $(BIN)/kbt select $$spec -o examples/$$op && $(BIN)/kbt usage $$spec -o examples/$$op && \
	  $(BIN)/kbt verify examples/$$op --root examples/$$op || status=1; done; exit $$status

# Every CUDA path once, results under build/gpu-check/ (summary.md first): the CUDA tests, the
# notebooks on cpu,cuda, the expansion benchmark against a device-to-device copy and on the CPU
# against a hot fill_. Without a CUDA device the CUDA steps skip with their reason.
gpu-check: setup
	$(BIN)/python scripts/gpu_check.py -o build/gpu-check

# The site test drives Debian's headless Chromium; install it when missing (root, apt).
# Where it cannot be installed the test says so and skips.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-zenhei) >/dev/null 2>&1 \
	    || echo "make browser: chromium could not be installed; the site test will skip"; }

# JupyterLab (installed by setup), configured by kb_tools.outputs.lab_launch (the browser test
# starts the same server). A .py file opens as a notebook (jupytext) when it is one:
# notebooks/*.py, and any review written by `kbt review --format notebook -o X.py` (it starts with
# a jupytext header); any other .py (kb_tools/cli.py) opens in the editor. A notebook starts its kernel without asking.
# Its root is the repository, so a notebook's ../kb/*.md links open; it starts in notebooks/.
# LAB_ARGS adds options (e.g. LAB_ARGS="--port=8890 --no-browser").
lab: setup
	$(BIN)/python -m kb_tools.outputs.lab_launch --root "$(CURDIR)" $(LAB_ARGS)

# Rebuild the extension make lab loads (kb_tools/outputs/labextensions/, committed) from labextension/src: needs node and npm.
lab-extension: setup
	cd labextension && npm install --no-audit --no-fund --no-package-lock && PATH="$(CURDIR)/$(BIN):$$PATH" npm run build

clean:
	rm -rf build
