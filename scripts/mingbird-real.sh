#!/usr/bin/env bash
# Opt-in check of the real Mingbird arm (v1.5.0): `lrab arms install mingbird` clones
# Mingbird/Mingbird-agent at the pinned commits (or takes the checkout or folder MINGBIRD_SRC
# names, e.g. MINGBIRD_SRC=~/.cache/lrab/mingbird-src holding <commit>/ollama_agent.py and
# <commit>/appconfig.py), checks every file's sha256, and the test runs all 18 tasks against
# sim-oracle and the four sim models through the runner, confined. Nothing of Mingbird's code
# enters this repository.
set -euo pipefail
cd "$(dirname "$0")/.."
LRAB_MINGBIRD=1 exec cargo test --locked -p lrab-runner --test mingbird_real -- --ignored --nocapture "$@"
