#!/usr/bin/env bash
# Installs the Elephants Bluff companion on a Raspberry Pi as a systemd service.
#
# Needs Raspberry Pi OS 64-bit, Bookworm (12) or later, and root:
#   sudo deploy/install-pi.sh [--user NAME] [--prefix DIR] [--instance DIR]
#                             [--port N] [--hostname NAME] [--no-start]
#
# Safe to run again: that is how the companion is updated (see deploy/README.md).
# The settings file and the game log in the instance folder are never replaced.
set -euo pipefail

APP_USER="elephants"
PREFIX="/opt/elephants-bluff"
INSTANCE="/var/lib/elephants-bluff"
PORT="8000"
NEW_HOSTNAME=""
START=1
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UNIT_SRC="$SRC/deploy/elephants-bluff.service"
UNIT_DST="/etc/systemd/system/elephants-bluff.service"

die() {
  echo "install-pi: $*" >&2
  exit 1
}

usage() {
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
  case "$1" in
    --user) APP_USER="${2:?--user needs a name}"; shift 2 ;;
    --prefix) PREFIX="${2:?--prefix needs a folder}"; shift 2 ;;
    --instance) INSTANCE="${2:?--instance needs a folder}"; shift 2 ;;
    --port) PORT="${2:?--port needs a number}"; shift 2 ;;
    --hostname) NEW_HOSTNAME="${2:?--hostname needs a name}"; shift 2 ;;
    --no-start) START=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

case "$PORT" in
  '' | *[!0-9]*) die "--port must be a number, not '$PORT'" ;;
esac
case "$APP_USER" in
  root) die "the companion must not run as root; choose another --user" ;;
  '' | *[!a-z0-9_-]*) die "--user must be lower-case letters, digits, - or _, not '$APP_USER'" ;;
esac
case "$PREFIX$INSTANCE" in
  *[[:space:]]*) die "--prefix and --instance must not contain spaces" ;;
esac
[ "$(id -u)" -eq 0 ] || die "run me as root: sudo $0 $*"
[ -f "$SRC/pyproject.toml" ] || die "run me from a checkout of the project (no pyproject.toml in $SRC)"
[ -f "$UNIT_SRC" ] || die "the unit file $UNIT_SRC is missing"

# --- the system -----------------------------------------------------------------
[ -r /etc/os-release ] || die "cannot tell which system this is (/etc/os-release is missing)"
# shellcheck source=/dev/null
. /etc/os-release
major="${VERSION_ID%%.*}"
case "${ID:-}" in
  debian | raspbian) ;;
  *) die "this script is for Raspberry Pi OS (Debian), not ${PRETTY_NAME:-an unknown system}" ;;
esac
if [ -z "$major" ] || [ "$major" -lt 12 ]; then
  die "Raspberry Pi OS Bookworm (12) or later is needed; this is ${PRETTY_NAME:-version ${VERSION_ID:-unknown}}"
fi
if [ "$(uname -m)" != "aarch64" ]; then
  echo "install-pi: warning: this is $(uname -m), not 64-bit ARM; the camera packages may be missing" >&2
fi

echo "==> Installing system packages (picamera2, lgpio, avahi for the .local name)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  python3-venv python3-pip python3-picamera2 python3-libcamera python3-lgpio avahi-daemon

if [ -n "$NEW_HOSTNAME" ]; then
  echo "==> Naming this Pi $NEW_HOSTNAME (reachable as $NEW_HOSTNAME.local)"
  hostnamectl set-hostname "$NEW_HOSTNAME"
fi
HOST_NAME="$(hostname)"

# --- the user -------------------------------------------------------------------
if ! id "$APP_USER" >/dev/null 2>&1; then
  echo "==> Creating the unprivileged user $APP_USER"
  useradd --system --user-group --home-dir "$INSTANCE" --no-create-home --shell /usr/sbin/nologin "$APP_USER"
fi
for group in gpio video; do
  getent group "$group" >/dev/null || groupadd --system "$group"
done
usermod -a -G gpio,video "$APP_USER"

# --- the program ----------------------------------------------------------------
echo "==> Installing the companion into $PREFIX/venv"
install -d -m 0755 "$PREFIX"
# --system-site-packages: picamera2 and libcamera come from apt, not from PyPI.
python3 -m venv --system-site-packages "$PREFIX/venv"
"$PREFIX/venv/bin/pip" install --quiet --upgrade pip
# picamera2's compiled helpers (simplejpeg) are built against the system's numpy;
# a newer numpy from PyPI in the venv breaks them ("numpy.dtype size changed").
# Keep the system's numpy when the project accepts it.
SYSTEM_NUMPY="$(python3 -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)"
CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
if [ -n "$SYSTEM_NUMPY" ]; then
  echo "numpy==$SYSTEM_NUMPY" >"$CONSTRAINTS"
fi
if ! "$PREFIX/venv/bin/pip" install --quiet --upgrade --constraint "$CONSTRAINTS" "$SRC"; then
  echo "install-pi: warning: the project does not accept the system's numpy $SYSTEM_NUMPY; installing its own" >&2
  "$PREFIX/venv/bin/pip" install --quiet --upgrade "$SRC"
fi
"$PREFIX/venv/bin/python" -c "import picamera2, gpiozero, companion" \
  || die "the companion is installed but cannot import picamera2/gpiozero (see above; a numpy mismatch shows as 'numpy.dtype size changed')"

# --- the settings (first install only) --------------------------------------------
install -d -o "$APP_USER" -g "$APP_USER" -m 0750 "$INSTANCE"
if [ ! -f "$INSTANCE/config.toml" ]; then
  echo "==> Writing the settings $INSTANCE/config.toml"
  EB_INSTANCE="$INSTANCE" EB_HOST="$HOST_NAME" runuser -u "$APP_USER" -- "$PREFIX/venv/bin/python" - <<'PY'
import os, secrets
from pathlib import Path
from companion.settings import CONFIG_NAME, all_settings, render_config

instance = Path(os.environ["EB_INSTANCE"])
host = os.environ["EB_HOST"]
values = {
    "table.pin": f"{secrets.randbelow(10**6):06d}",
    "camera.backend": "picamera2",
    "gpio.pin_factory": "lgpio",
    "server.trusted_hosts": sorted({"127.0.0.1", "localhost", host, f"{host}.local", "elephants-bluff.local"}),
}
path = instance / CONFIG_NAME
tmp = path.with_suffix(".tmp")
tmp.write_text(render_config(all_settings(), values), encoding="utf-8")
os.chmod(tmp, 0o640)
os.replace(tmp, path)
PY
else
  echo "==> Keeping the settings in $INSTANCE/config.toml"
fi
"$PREFIX/venv/bin/python" - "$INSTANCE/config.toml" <<'PY' || die "the settings file is not usable; fix it and run me again"
import sys
from pathlib import Path
from companion.errors import ElephantsBluffError
from companion.settings import Settings
from firmware.pins import check_pin_map

try:
    check_pin_map(Settings.load(Path(sys.argv[1]), environ={}))
except ElephantsBluffError as exc:
    sys.exit(f"install-pi: {exc.message}")
PY

# --- the service ----------------------------------------------------------------
echo "==> Installing the systemd unit $UNIT_DST"
sed -e "s#/opt/elephants-bluff#$PREFIX#g" \
  -e "s#/var/lib/elephants-bluff#$INSTANCE#g" \
  -e "s#--port 8000#--port $PORT#" \
  -e "s#^User=elephants\$#User=$APP_USER#" \
  -e "s#^Group=elephants\$#Group=$APP_USER#" \
  "$UNIT_SRC" >"$UNIT_DST.tmp"
if [ "$INSTANCE" != "/var/lib/elephants-bluff" ]; then
  # StateDirectory= only names folders under /var/lib; another instance folder is made above.
  sed -i -e '/^StateDirectory/d' "$UNIT_DST.tmp"
fi
mv "$UNIT_DST.tmp" "$UNIT_DST"
systemctl daemon-reload
systemctl enable elephants-bluff.service >/dev/null
if [ "$START" -eq 1 ]; then
  systemctl restart elephants-bluff.service
  systemctl --no-pager --lines=5 status elephants-bluff.service || true
fi

PIN="$(sed -n 's/^pin = "\(.*\)"$/\1/p' "$INSTANCE/config.toml" | head -n 1)"
echo
echo "Done. On a tablet on the same network open:  http://$HOST_NAME.local:$PORT"
echo "Table PIN: ${PIN:-see $INSTANCE/config.toml}"
echo "Logs: journalctl -u elephants-bluff -f"
