#!/usr/bin/env bash
# needed by: tests (scripts/setup.sh test; the main job does without it)
# Builds the OpenTelemetry trace backend the tests send spans to and read back: Jaeger v2
# (module github.com/jaegertracing/jaeger, command ./cmd/jaeger, pinned version) from the Go module
# proxy into <home>/bin/jaeger-<version> (home = RLSTREAM_HOME or ~/.rlstream).
# Idempotent: a present binary is left as is. Go's module and build caches live in
# ~/.cache/rlstream/go, so a rebuild after a version bump reuses what it can.
# The module's go.mod carries replace directives, so `go install module@version` refuses it: the
# module is downloaded and built as the main module, with exactly the versions its go.sum pins.
# First build: ~1.3 GB of modules and many minutes of compiling on two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."

VERSION=v1.76.0 # keep in step with infra/telemetry/backend.py VERSION
MODULE=github.com/jaegertracing/jaeger
log() { printf '[setup:jaeger] %s\n' "$*" >&2; }

home="${RLSTREAM_HOME:-$HOME/.rlstream}"
bin="$home/bin/jaeger-$VERSION"
if [ -x "$bin" ]; then
  log "present ($bin)"
  exit 0
fi

go_bin="$(command -v go || true)"
[ -n "$go_bin" ] || { [ -x /usr/local/go/bin/go ] && go_bin=/usr/local/go/bin/go; }
if [ -z "$go_bin" ]; then
  log "Go is missing: install Go >= 1.21 (it fetches the toolchain the module asks for from the Go module proxy)"
  exit 2
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/rlstream/go"
mkdir -p "$cache" "$home/bin"
export GOPATH="$cache" GOMODCACHE="$cache/pkg/mod" GOCACHE="$cache/build"
export GOFLAGS="-buildvcs=false -trimpath" CGO_ENABLED=0
# GOTOOLCHAIN stays as configured (auto by default): an older Go switches to the one go.mod names

log "downloading $MODULE@$VERSION ($("$go_bin" version))"
dir="$("$go_bin" mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$dir" ] || [ ! -d "$dir/cmd/jaeger" ]; then
  log "the Go module proxy did not serve $MODULE@$VERSION"
  exit 1
fi

log "building $MODULE/cmd/jaeger@$VERSION (first time: many minutes on two cores; progress below)"
started=$(date +%s)
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# -v names each package as it is compiled: every 100th is shown as progress, anything else (errors) whole
if ! (cd "$dir" && "$go_bin" build -p "$(nproc)" -o "$tmp" -v ./cmd/jaeger 2>&1 \
  | awk '/ / { print > "/dev/stderr"; next } { n++; if (n % 100 == 0) printf "[setup:jaeger] %d packages compiled\n", n > "/dev/stderr" }') \
  || [ ! -s "$tmp" ]; then
  log "build failed (see above)"
  exit 1
fi
mv "$tmp" "$bin"
trap - EXIT
log "built $bin in $(($(date +%s) - started))s"
