#!/usr/bin/env bash
# Opt-in check of the third-party arms (downloads several GB of packages the first time):
# installs every arm with an [install] table into the arms cache (LRAB_ARMS_CACHE, else
# ~/.cache/lrab/arms) when missing, then runs WF-04 and WF-06 per arm against sim-oracle.
# An arm whose registry does not answer is skipped and named.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --locked -p lrab-runner --test arms_real -- --ignored --nocapture "$@"
