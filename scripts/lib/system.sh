# Sourced by scripts/setup.sh and scripts/gpu-check.sh. Uses the caller's `log` function.
#   ensure_debian_packages PACKAGE...   installs the missing ones with apt-get (as root), else exits 2 naming them
#   ensure_uv                           installs the pinned uv with pip if it is not on PATH
ensure_debian_packages() {
  [ "$#" -gt 0 ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    log "missing Debian packages: $* (run as root or install them: apt-get install $*)"
    exit 2
  fi
  log "installing Debian packages: $*"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_uv() {
  command -v uv >/dev/null 2>&1 && return 0
  log "installing uv"
  python3 -m pip install --quiet --disable-pip-version-check "uv==0.13.9" 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "uv==0.13.9"
}
