#!/bin/bash
# Opt-in check of the Kubernetes files, with tools installable here (no cluster needed):
#
#   deploy/check.sh            schema check only
#   LRAB_IMAGE_BUILD=1 deploy/check.sh    … and build the image and run a shard inside it
#
# 1. Schema: deploy/lrab-job.yaml and lrab-merge-job.yaml against the published Kubernetes
#    JSON schemas (strict: unknown fields are errors) for 1.29 (the oldest with everything the
#    Job uses), 1.33 and 1.37, with kubernetes-validate from PyPI in a venv outside the
#    repository (LRAB_K8S_VENV, default ~/.cache/lrab/k8s-venv). A canary with a misspelt
#    field must be rejected, so the check can fail.
# 2. Image (LRAB_IMAGE_BUILD=1, root): buildah from Debian (installed if missing). Registry
#    images cannot be pulled here, so the base is made with debootstrap from the Debian mirror
#    apt already uses (cached as localhost/lrab-base:bookworm); build-image.sh builds the
#    Containerfile on it; then one shard of a 2-cell matrix on the simulated backend (our
#    harness and agent-mini) runs inside the image with `buildah run`, and its rows are checked.
#    (Under chroot isolation our harness's confined shell cannot start commands, so its score
#    there is lower than on the host; see docs/distributed.md.)
# Exit 0 when everything holds, 1 on a failed check, 77 when a tool cannot be installed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
say() { printf '== %s\n' "$*"; }
fail() { printf 'k8s-check: FAIL: %s\n' "$*" >&2; exit 1; }
skip() { printf 'k8s-check: SKIP: %s\n' "$*" >&2; exit 77; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
VALIDATOR_VERSION=1.37.0

# --- 1. schema ---------------------------------------------------------------------------------
V=${LRAB_K8S_VENV:-$HOME/.cache/lrab/k8s-venv}
if ! "$V/bin/kubernetes-validate" --version 2>/dev/null | grep -q "$VALIDATOR_VERSION"; then
  say "installing kubernetes-validate $VALIDATOR_VERSION into $V"
  { python3 -m venv "$V" && "$V/bin/pip" install --quiet "kubernetes-validate==$VALIDATOR_VERSION"; } ||
    skip "cannot install kubernetes-validate (pip)"
fi
for k in 1.29.0 1.33.0 1.37.0; do
  "$V/bin/kubernetes-validate" --strict --quiet -k "$k" "$HERE/lrab-job.yaml" "$HERE/lrab-merge-job.yaml" ||
    fail "the manifests do not validate against Kubernetes $k"
  say "schema: lrab-job.yaml (PersistentVolumeClaim, Job) and lrab-merge-job.yaml valid for Kubernetes $k (strict)"
done
canary=$(mktemp "${TMPDIR:-/tmp}/lrab-k8s-canary.XXXXXX.yaml")
sed 's/completionMode:/completionMod:/' "$HERE/lrab-job.yaml" >"$canary"
if "$V/bin/kubernetes-validate" --strict --quiet -k 1.33.0 "$canary" >/dev/null 2>&1; then
  rm -f "$canary"; fail "canary: a misspelt field was not rejected"
fi
rm -f "$canary"
say "schema: canary with a misspelt field rejected (ok)"

[ "${LRAB_IMAGE_BUILD:-0}" = 1 ] || { say "OK (image build not asked for: LRAB_IMAGE_BUILD=1)"; exit 0; }

# --- 2. image ------------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "the image build needs root here (buildah with chroot isolation)"
if ! command -v buildah >/dev/null || ! command -v debootstrap >/dev/null; then
  say "installing buildah and debootstrap"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends buildah debootstrap; } >/dev/null 2>&1 ||
    skip "cannot install buildah/debootstrap"
fi
# chroot isolation and the vfs driver work without a container engine, cgroups or overlayfs.
export BUILDAH_ISOLATION=chroot STORAGE_DRIVER=vfs
BASE=localhost/lrab-base:bookworm
T=$(now)
if ! buildah inspect --type image "$BASE" >/dev/null 2>&1; then
  mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /\/debian$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
  [ -n "$mirror" ] || skip "no Debian mirror in the apt sources for debootstrap"
  root=$(mktemp -d "${TMPDIR:-/tmp}/lrab-rootfs.XXXXXX")
  say "making $BASE with debootstrap (minbase, bookworm)"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
    { tail -n 20 "$root.log" >&2; rm -rf "$root"; fail "debootstrap failed"; }
  c=$(buildah from scratch)
  m=$(buildah mount "$c")
  cp -a "$root/." "$m/"
  buildah umount "$c" >/dev/null
  buildah commit --quiet "$c" "$BASE" >/dev/null
  buildah rm "$c" >/dev/null
  rm -rf "$root" "$root.log"
fi
T_BASE=$(since "$T")
T=$(now)
TAG=localhost/lrab:check
# This machine's own extra CAs (a re-signing proxy) go into the image, or pip cannot reach PyPI.
ca=()
for c in /usr/local/share/ca-certificates/*.crt; do [ -f "$c" ] && ca+=(--ca-file "$c"); done
bash "$HERE/build-image.sh" --tag "$TAG" --base "$BASE" --arms "${LRAB_IMAGE_ARMS:-agent-mini}" \
  ${ca[@]+"${ca[@]}"} >/dev/null || fail "build-image.sh failed"
T_BUILD=$(since "$T")
say "image $TAG built on $BASE (base ${T_BASE} s, build ${T_BUILD} s)"
CTX_LOG=$(mktemp "${TMPDIR:-/tmp}/lrab-image-run.XXXXXX")
c=$(buildah from "$TAG")
trap 'buildah rm "$c" >/dev/null 2>&1 || true; rm -f "$CTX_LOG"' EXIT
buildah run --env LRAB_SHARD_INDEX=0 "$c" -- lrab-shard 1 img /results \
  --backend sim --arms harness,agent-mini --models sim-2b --tasks WF-01 >"$CTX_LOG" 2>&1 ||
  { cat "$CTX_LOG" >&2; fail "the shard did not run inside the image"; }
grep '^| ' "$CTX_LOG" >&2 || true
rows=$(buildah run "$c" -- sh -c 'tail -n +2 /results/img-s1of1/cells.csv' | grep -c .)
[ "$rows" = 2 ] || fail "the shard inside the image recorded $rows rows, not 2"
buildah run "$c" -- lrab-merge 1 img /results >&2 || fail "lrab-merge failed inside the image"
buildah run "$c" -- test -f /results/img/plan.jsonl || fail "no merged run inside the image"
say "image: lrab-shard and lrab-merge ran a 2-cell sim matrix (harness, agent-mini) inside $TAG"
say "OK"
