#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need (pytest), then runs every
# crate's tests. Used by developers and by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m pytest --version >/dev/null 2>&1; then
  python3 -m pip install --quiet pytest
fi
cargo test --workspace --locked "$@"
