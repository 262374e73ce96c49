#!/bin/bash
# Builds the image of deploy/Containerfile (the one deploy/lrab-job.yaml names).
#
#   deploy/build-image.sh [--tag TAG] [--base IMAGE] [--arms "agent-mini opencode"]
#                         [--ca-file CERT.crt]…
#
# Stages the build context outside the repository (LRAB_IMAGE_CONTEXT, default
# ~/.cache/lrab/image-context): a release build of lrab and lrab-harness (or the pair next to
# LRAB_BIN), arms/, tasks/ and scripts/slurm/. Builder: $BUILDER, else the first of buildah,
# podman, docker found. --ca-file adds a CA certificate to the image's trust store (for a
# network whose proxy re-signs TLS; pip and npm in the build need it). Prints the tag it built.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TAG=registry.example.org/lrab:latest BASE= ARMS="agent-mini opencode"
CAS=()
die() { printf 'build-image: %s\n' "$*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG=${2:?}; shift 2 ;;
    --base) BASE=${2:?}; shift 2 ;;
    --arms) ARMS=${2?}; shift 2 ;;
    --ca-file) CAS+=("${2:?}"); shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
B=${BUILDER:-}
if [ -z "$B" ]; then
  for c in buildah podman docker; do command -v "$c" >/dev/null && { B=$c; break; }; done
fi
[ -n "$B" ] || die "no image builder (buildah, podman or docker) on this machine"
if [ -n "${LRAB_BIN:-}" ]; then
  BIN_DIR=$(cd "$(dirname "$LRAB_BIN")" && pwd)
else
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/lrab/target}
  (cd "$REPO" && cargo build --release --quiet -p lrab-runner -p lrab-harness)
  BIN_DIR=$CARGO_TARGET_DIR/release
fi
for b in lrab lrab-harness; do [ -x "$BIN_DIR/$b" ] || die "missing $BIN_DIR/$b"; done
CTX=${LRAB_IMAGE_CONTEXT:-$HOME/.cache/lrab/image-context}
rm -rf "$CTX"
mkdir -p "$CTX/bin" "$CTX/scripts" "$CTX/ca"
for c in ${CAS[@]+"${CAS[@]}"}; do
  [ -f "$c" ] || die "no CA file $c"
  cp "$c" "$CTX/ca/$(basename "${c%.*}").crt"
done
cp "$BIN_DIR/lrab" "$BIN_DIR/lrab-harness" "$CTX/bin/"
mkdir -p "$CTX/tasks"
cp -r "$REPO/arms" "$CTX/"
cp -r "$REPO/tasks/lrab" "$CTX/tasks/"
cp -r "$REPO/scripts/slurm" "$CTX/scripts/"
args=(--build-arg "ARMS=$ARMS" -t "$TAG" -f "$REPO/deploy/Containerfile")
[ -z "$BASE" ] || args+=(--build-arg "BASE=$BASE")
case "$B" in
  buildah) buildah bud "${args[@]}" "$CTX" ;;
  *) "$B" build "${args[@]}" "$CTX" ;;
esac >&2
echo "$TAG"
