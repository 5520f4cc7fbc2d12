# Helpers shared by scripts/setup.sh and scripts/setup-test.sh (sourced, not run):
# apt-get as root or through sudo, and installs that skip what is present.

log() { printf '[%s] %s\n' "${SETUP_NAME:-setup}" "$*"; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    log "not root and no sudo: install the packages listed in $0 by hand"; fi
fi

if ! command -v apt-get >/dev/null 2>&1; then
  log "no apt-get: this script knows Debian 12; install the packages listed in $0 by hand"
  exit 1
fi

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

apt_updated=0
apt_update() {
  if [ $apt_updated -eq 0 ]; then $SUDO apt-get update -qq; apt_updated=1; fi
}

# Installs the packages of "$@" that are missing (without recommends).
apt_install() {
  local missing=()
  for p in "$@"; do have_pkg "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  apt_update
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
