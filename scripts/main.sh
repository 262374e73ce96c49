#!/usr/bin/env bash
# The main job on a fresh machine: build the suite, make sure the checks' pytest is there, install
# the upstream arms opencode and agent-mini (pinned, into the per-user arms cache) when their
# registries answer, then run a small matrix — our harness beside the paper's arms that are
# installed (`--arms paper+harness`: Mingbird and goose need `lrab arms install`), × four model
# sizes × six tasks — against a real Ollama when one answers, else against the built-in
# simulated backend (labelled as simulated), and print where the report is. It says what it
# installed and what it could not. Extra arguments go to `lrab run` (e.g. --tasks all-of-them,
# --models ..., --backend sim). The dev profile is used: it builds several times faster than
# --release on small machines, and the arms, not the runner, dominate a cell's time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked -p lrab-runner -p lrab-harness
target="${CARGO_TARGET_DIR:-target}"
lrab="$target/debug/lrab"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/lrab"
say() { echo "main: $*" >&2; }

# 1. pytest for the checks that run it. When the system python lacks it, it goes into a venv in
#    the cache, and that venv's bin/ is put first on PATH so the scorer's `python3 -m pytest`
#    (and the arms' own python3) find it.
pytest_pin="9.2.0"
if python3 -m pytest --version >/dev/null 2>&1; then
  say "pytest: present ($(python3 -m pytest --version 2>&1 | head -1))"
else
  venv="$cache/tools/pytest"
  if ! "$venv/bin/python3" -m pytest --version >/dev/null 2>&1; then
    say "pytest: missing from python3; installing pytest==$pytest_pin into $venv"
    if python3 -m venv "$venv" && "$venv/bin/python3" -m pip install --quiet \
        --disable-pip-version-check "pytest==$pytest_pin"; then
      say "pytest: installed ($("$venv/bin/python3" -m pytest --version 2>&1 | head -1))"
    else
      say "pytest: could not be installed (PyPI unreachable?); WF-04, whose check runs pytest, is left out (lrab run refuses tasks it cannot score)"
      no_pytest=1
    fi
  else
    say "pytest: using $venv ($("$venv/bin/python3" -m pytest --version 2>&1 | head -1))"
  fi
  if [ -x "$venv/bin/python3" ]; then
    export PATH="$venv/bin:$PATH"
  fi
fi

# 2. The upstream arms, pinned, into the arms cache (a no-op when already there).
if "$lrab" arms install opencode agent-mini; then
  say "arms: opencode and agent-mini are installed (see above)"
else
  say "arms: not every upstream arm could be installed (see the lines above); the run leaves the missing ones out"
fi

# 3. The matrix.
tasks=WF-01,WF-04,WF-06,WF-10,LH-01,LH-03
if [ "${no_pytest:-0}" = 1 ]; then tasks=WF-01,WF-06,WF-10,LH-01,LH-03; fi
exec "$lrab" run --backend auto --arms paper+harness --tasks "$tasks" "$@"
