# Two commands set everything up on a fresh machine with Python 3.11:
#   make run   - install and start the companion on the simulated table
#   make test  - install and run every test
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
INSTANCE ?= instance
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-training test-page-orders bench venv lock system-deps train train-base clean translations pi-root pi-rehearsal pi-check

# The stamps are remade when pyproject.toml or the pinned versions change, so a
# pulled dependency change installs itself on the next run. `run` needs only the
# runtime; `test` adds the test tools. Every dependency is installed at the version
# deploy/locked-versions.txt names (`make lock` writes it), as the Pi's install is,
# and numpy, onnxruntime and OpenCV at the versions `make pi-check` last read equal
# on arm64 (deploy/pi/tested-versions.txt): the tests read with what the Pi reads with.
TESTED := deploy/pi/tested-versions.txt
LOCKED := deploy/locked-versions.txt
PINS := -c $(TESTED) -c $(LOCKED)
$(VENV)/.runtime: pyproject.toml $(TESTED) $(LOCKED)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip -c $(LOCKED)
	$(PY) -m pip install --quiet -e . $(PINS)
	touch $@

$(VENV)/.installed: $(VENV)/.runtime
	$(PY) -m pip install --quiet -e '.[test]' $(PINS)
	touch $@

# Writes deploy/locked-versions.txt from a fresh venv of the project with its test and pi
# extras (deploy/lock_versions.py); then run make test and make pi-rehearsal on it.
lock:
	$(PYTHON) deploy/lock_versions.py

venv: $(VENV)/.installed

run: $(VENV)/.runtime
	$(BIN)/elephants-bluff serve --simulate --host $(HOST) --port $(PORT) --instance $(INSTANCE) --init

# The page's texts: extract the keys from the code into the template, merge it into
# the nine catalogs, compile them (companion/app/web/i18n.py says how they are used).
TRANSLATIONS := companion/app/web/translations
translations: $(VENV)/.runtime
	$(BIN)/pybabel extract -F companion/app/web/babel.cfg -k t -k tn:1,2 -k N_ --no-default-keywords --no-location --sort-output --project elephants-bluff --version 0.1.0 --copyright-holder "Elephants Bluff companion" -o $(TRANSLATIONS)/messages.pot companion/app/web
	for lang in en fr nl de it es pl ro da; do $(BIN)/pybabel update -i $(TRANSLATIONS)/messages.pot -d $(TRANSLATIONS) -l $$lang --no-wrap --no-fuzzy-matching --ignore-obsolete; done
	$(BIN)/pybabel compile -d $(TRANSLATIONS) --statistics

# Debian's Chromium drives the browser tests (never `playwright install`).
# apt waits up to 10 minutes for another apt (an unattended upgrade, pi-root's) instead of failing at once.
APT := apt-get -o DPkg::Lock::Timeout=600
system-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "Installing Debian's chromium for the browser tests"; \
	  $(APT) update -qq && DEBIAN_FRONTEND=noninteractive $(APT) install -y -qq chromium >/dev/null; \
	fi
	@# shellcheck checks deploy/install-pi.sh in the tests.
	@if ! command -v shellcheck >/dev/null; then \
	  echo "Installing Debian's shellcheck for the install script's test"; \
	  $(APT) update -qq && DEBIAN_FRONTEND=noninteractive $(APT) install -y -qq shellcheck >/dev/null; \
	fi
	@# openscad runs hardware/tray-mount.scad in the tests: the distances BUILD.md and LIGHTING.md quote (about 8 s).
	@if ! command -v openscad >/dev/null; then \
	  echo "Installing Debian's openscad for the tray mount's test"; \
	  $(APT) update -qq && DEBIAN_FRONTEND=noninteractive $(APT) install -y -qq --no-install-recommends openscad >/dev/null; \
	fi

# lint-imports: the layers in pyproject.toml ([tool.importlinter]); an upward import fails the build.
# The tests run on TEST_WORKERS processes (pytest-xdist), each taking a whole file at a time, so a file's
# module fixtures are made once; one by one they took over the 30 minutes CI allows on its 2 cores.
TEST_WORKERS ?= 2
test: $(VENV)/.installed system-deps
	$(BIN)/lint-imports
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile

# The page suite in reversed order, then shuffled (SEED=N picks the order): its tests share one server per worker, so
# a test that passes only after another, or that leaves the table in a state a later one trips on, shows here. Not in
# CI (two whole page runs, about 13 minutes on 2 cores): run it after changing the page or its tests' helpers.
SEED ?= 1
test-page-orders: $(VENV)/.installed system-deps
	mkdir -p build
	$(PY) -m pytest -q -p no:cacheprovider --collect-only tests/page | grep '::' | tac > build/page-reversed.txt
	$(PY) -c "import random; ids = open('build/page-reversed.txt').read().splitlines(); random.Random($(SEED)).shuffle(ids); open('build/page-shuffled.txt', 'w').write('\n'.join(ids) + '\n')"
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile @build/page-reversed.txt
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile @build/page-shuffled.txt

# The training code's extra (PyTorch from the local CPU wheel, onnx), beside the test install: the train-* targets and
# test-training need it; the product and make test do not.
$(VENV)/.train: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,train]' $(PINS)
	touch $@

# The training code's tests with PyTorch installed (about six and a half minutes on 2 cores): make test, as CI runs
# it, has no PyTorch and skips the ones that train or export a net, which would take it past CI's 30 minutes. Run
# this after changing models/training or what it shares with the reader (the cropper, the renderer, the detector's
# decoding).
TRAINING_TESTS := $(wildcard tests/vision/test_training_*.py tests/vision/test_detector_*.py)
test-training: $(VENV)/.train
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile $(TRAINING_TESTS)

# The benches drive a real server with requests and measure it with psutil,
# both test tools: bench needs the test install.
bench: $(VENV)/.installed
	$(PY) -m bench --full --output docs/bench-latest.json --figures docs/FIGURES.md

# Retrains the face classifier (CPU, PyTorch from the local wheel): stage 2 of the shipped recipe, the
# kept base model fine-tuned on every shared real set's train split and the learned detector's own crops
# (models/MODEL_CARD.md, "How the shipped model is made"; seed 3, about 13 minutes on 2 cores). Writes to
# build/classifier/candidate, never over the shipped model; data cache and per-epoch checkpoints in
# build/classifier/ (--resume picks up a stopped run). Judge the candidate beside the shipped model on every
# val and built set (never Byler's test split) before shipping it: make judge (about 5 minutes a model with the table, and
# once per candidate about 16 minutes more to fit its own cues into build/judge/cues).
train: $(VENV)/.train
	$(PY) -m models.training.train --real-sets --strong-augment --widths 16,48,96,96 --init models/training/base/dice-faces-5bbb6f704193.onnx --lr 1e-3 --epochs 5 --byler-reps 5 --faces 8000 --frames 120 --side-range 0.8,1.35 --detector-reps 2 --resume --out build/classifier/candidate

# The second opinion (vision/second_opinion.py; models/MODEL_CARD.md, "The second opinion"): the same recipe, seed 3,
# with 3,000 round things labelled not a die; written as models/second-opinion-<id>.onnx and named in models/shipped.json
# in place of the one there
# (about 7 minutes with train's data cache in build/classifier/, longer without).
train-second-opinion: $(VENV)/.train
	$(PY) -m models.training.train --real-sets --strong-augment --widths 16,48,96,96 --init models/training/base/dice-faces-5bbb6f704193.onnx --lr 1e-3 --epochs 5 --byler-reps 5 --faces 8000 --frames 120 --side-range 0.8,1.35 --detector-reps 2 --round-things 3000 --resume --out build/classifier/second-opinion
	f=$$(ls build/classifier/second-opinion/dice-faces-*.onnx | head -1) && id=$$(sha256sum $$f | cut -c1-12) && cp $$f models/second-opinion-$$id.onnx && $(PY) -m vision.model_files ship models/second-opinion-$$id.onnx second_opinion
.PHONY: train-second-opinion

# The candidates in build/classifier/candidate read end to end beside the shipped model (models/training/judge.py),
# each with its own number-dice and leaning cues, fit once into build/judge/cues; the simulated table and the things
# that are not dice (models/training/not_dice.py) and dice partly covered (models/training/covered.py) too.
judge: $(VENV)/.installed
	$(PY) -m models.training.judge build/classifier/candidate/dice-faces-*.onnx --table 2 --things 20 --covered 20
.PHONY: judge

# The leaning cue on the shipped classifier's embedding (rendered frames from below and above, and the shared sets'
# train photos as flat dice; seeded, numpy only; about twenty minutes): writes models/leaning-cue.npz. Retrain it after the classifier (docs/READING.md, "The leaning cue").
.PHONY: train-leaning-cue
train-leaning-cue: $(VENV)/.installed
	$(PY) -m models.training.leaning_cue

# The number-dice cue on the shipped classifier's embedding (drawn number dice against rendered and real pip dice,
# seeded, numpy only; about four minutes): writes models/number-cue.npz and prints what it flags of dice it never saw.
# Retrain it after the classifier (docs/READING.md, "Number dice").
.PHONY: train-number-cue
train-number-cue: $(VENV)/.installed
	$(PY) -m models.training.number_cue

# Stage 1: the base model (models/training/base/) from scratch, into build/classifier/base.
train-base: $(VENV)/.train
	$(PY) -m models.training.train --strong-augment --widths 16,48,96,96 --epochs 20 --out build/classifier/base

# The Pi, rehearsed here in a Debian Bookworm arm64 root under qemu-user (root
# needed; slow, so none of this is in `make test`; docs/PI.md). pi-root builds the
# root once into /var/cache/elephants-bluff and reuses it.
pi-root:
	bash deploy/pi/root.sh

# install-pi.sh in a fresh copy of the root, the service started as its user,
# a whole game over HTTP, the update, and the refusals: docs/pi-rehearsal-latest.json
pi-rehearsal:
	python3 deploy/pi/rehearsal.py

# the conformance frames read here and in the root as a Pi 4: docs/pi-check-latest.json;
# make pi-check PI_CPU=cortex-a76 reads them as a Pi 5: docs/pi-check-pi5-latest.json
PI_CPU ?= cortex-a72
pi-check: $(VENV)/.runtime
	python3 deploy/pi/pi_check.py --cpu $(PI_CPU)

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info

# Retrains the dice detector (CPU, PyTorch from the local wheel; 15-20 minutes on 2 quiet cores, an hour on a busy machine):
# a short first schedule, then a longer one from its best weights (models/DETECTOR_CARD.md).
.PHONY: train-detector
train-detector: $(VENV)/.train
	$(PY) -m models.training.detector.train --work build/detector --epochs 14 --steps 60 --synth 8000 --val-synth 80 --resume
	$(PY) -m models.training.detector.train --work build/detector/run2 --init build/detector/best.pt --epochs 16 --steps 100 --synth 8000 --val-synth 80 --resume --export models
