#!/usr/bin/env bash
# Installs the Elephants Bluff companion on a Raspberry Pi as a systemd service.
#
# Needs Raspberry Pi OS 64-bit, Bookworm (12) or later, and root:
#   sudo deploy/install-pi.sh [--user NAME] [--prefix DIR] [--instance DIR]
#                             [--port N] [--hostname NAME] [--no-start]
#                             [--skip-pi-only-packages] [--allow-downgrade]
#
# Safe to run again: that is how the companion is updated (see deploy/README.md).
# --user, --prefix, --instance and --port are remembered (/etc/elephants-bluff/install.conf)
# and reused by the next run when not given again.
# The settings file and the game log in the instance folder are never replaced.
# A failed update leaves the installed version in place and running.
set -euo pipefail
# onnxruntime reports usage to Microsoft and keeps a device id in the home of whoever
# imports it, unless told not to before the import (vision/onnx_runtime.py): the checks
# below import it as root.
export ORT_DISABLE_TELEMETRY=1

APP_USER="elephants"
PREFIX="/opt/elephants-bluff"
INSTANCE="/var/lib/elephants-bluff"
PORT="8000"
NEW_HOSTNAME=""
START=1
SKIP_PI_ONLY=0
ALLOW_DOWNGRADE=0
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UNIT_SRC="$SRC/deploy/elephants-bluff.service"
# numpy, onnxruntime and OpenCV at the versions `make pi-check` last read every
# conformance frame equal with on arm64: the Pi decides as the tests did.
TESTED_VERSIONS="$SRC/deploy/pi/tested-versions.txt"
# Every other dependency at the version CI tested (`make lock` writes the list).
LOCKED_VERSIONS="$SRC/deploy/locked-versions.txt"
UNIT_DST="/etc/systemd/system/elephants-bluff.service"
# The options of the last install (--user, --prefix, --instance, --port), written at its end:
# an update run with no options keeps them.
OPTIONS_FILE="/etc/elephants-bluff/install.conf"
# The tests and `make pi-rehearsal` point this at a fake file to play other systems.
OS_RELEASE="${INSTALL_PI_OS_RELEASE:-/etc/os-release}"
# and these to play a running systemd, and how long a restarted companion has to answer
SYSTEMD_DIR="${INSTALL_PI_SYSTEMD_DIR:-/run/systemd/system}"
ANSWER_WAIT_S="${INSTALL_PI_WAIT_S:-90}"
# one install at a time; the tests give each sandbox a lock of its own, so two of them never refuse each other
LOCK="${INSTALL_PI_LOCK:-/run/lock/elephants-bluff-install.lock}"
# Only the Raspberry Pi archive has these (Debian Bookworm has none of them).
PI_ONLY_PACKAGES="python3-picamera2 python3-libcamera python3-lgpio"

die() {
  echo "install-pi: $*" >&2
  exit 1
}

usage() {
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
}

GIVEN=""  # the remembered options given on this run: they win over the remembered ones
while [ $# -gt 0 ]; do
  case "$1" in
    --user) APP_USER="${2:?--user needs a name}"; GIVEN="$GIVEN user"; shift 2 ;;
    --prefix) PREFIX="${2:?--prefix needs a folder}"; GIVEN="$GIVEN prefix"; shift 2 ;;
    --instance) INSTANCE="${2:?--instance needs a folder}"; GIVEN="$GIVEN instance"; shift 2 ;;
    --port) PORT="${2:?--port needs a number}"; GIVEN="$GIVEN port"; shift 2 ;;
    --hostname) NEW_HOSTNAME="${2:?--hostname needs a name}"; shift 2 ;;
    --no-start) START=0; shift ;;
    --skip-pi-only-packages) SKIP_PI_ONLY=1; shift ;;
    --allow-downgrade) ALLOW_DOWNGRADE=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

# --- the options of the install before ----------------------------------------------
# The documented update is `git pull && sudo deploy/install-pi.sh`, with no options: with
# the defaults it would point the unit at another instance folder (a new config, a new PIN,
# the games out of sight), another port, user and venv. So the options of the last install
# are reused where not given again: from the file written at its end, or, for an install
# made before that file, from the unit it wrote.
remembered_options() {  # "key value" lines
  if [ -f "$OPTIONS_FILE" ]; then
    sed -n 's/^\(user\|prefix\|instance\|port\)=\([^[:space:]]*\)[[:space:]]*$/\1 \2/p' "$OPTIONS_FILE"
  elif [ -f "$UNIT_DST" ]; then
    sed -n 's/^User=\([^[:space:]]*\)[[:space:]]*$/user \1/p' "$UNIT_DST"
    sed -n 's#^ExecStart=\([^[:space:]]*\)/venv/bin/elephants-bluff serve .*$#prefix \1#p' "$UNIT_DST"
    sed -n 's#^ExecStart=.* --instance \([^[:space:]]*\).*$#instance \1#p' "$UNIT_DST"
    sed -n 's#^ExecStart=.* --port \([^[:space:]]*\).*$#port \1#p' "$UNIT_DST"
  fi
}
REUSED=""
REMEMBERED_FROM="$OPTIONS_FILE"
[ -f "$OPTIONS_FILE" ] || REMEMBERED_FROM="$UNIT_DST"
# (a here-string, not <(...): a root without /proc, as the rehearsal's arm64 root runs the script, has no /dev/fd)
REMEMBERED="$(remembered_options 2>/dev/null || true)"
while read -r key value; do
  [ -n "$value" ] || continue
  case " $GIVEN " in *" $key "*) continue ;; esac
  case "$key" in
    user) [ "$value" = "$APP_USER" ] || { APP_USER="$value"; REUSED="$REUSED --user $value"; } ;;
    prefix) [ "$value" = "$PREFIX" ] || { PREFIX="$value"; REUSED="$REUSED --prefix $value"; } ;;
    instance) [ "$value" = "$INSTANCE" ] || { INSTANCE="$value"; REUSED="$REUSED --instance $value"; } ;;
    port) [ "$value" = "$PORT" ] || { PORT="$value"; REUSED="$REUSED --port $value"; } ;;
  esac
done <<<"$REMEMBERED"
if [ -n "$REUSED" ]; then
  echo "==> Reusing the options of the install before ($REMEMBERED_FROM):$REUSED (give an option again to change it)"
fi

case "$PORT" in
  '' | *[!0-9]*) die "--port must be a number, not '$PORT'" ;;
esac
if [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
  die "--port must be between 1 and 65535, not $PORT"
fi
case "$APP_USER" in
  root) die "the companion must not run as root; choose another --user" ;;
  '' | *[!a-z0-9_-]*) die "--user must be lower-case letters, digits, - or _, not '$APP_USER'" ;;
esac
case "$PREFIX$INSTANCE" in
  *[[:space:]]*) die "--prefix and --instance must not contain spaces" ;;
esac
# A name the network can announce as NAME.local: letters, digits and inner hyphens (hostnamectl would change another
# one into something else, and the address said at the end would not be the Pi's).
if [ -n "$NEW_HOSTNAME" ]; then
  case "$NEW_HOSTNAME" in
    -* | *- | *[!a-zA-Z0-9-]*) die "--hostname must be letters, digits and hyphens (not first or last), such as elephants-bluff; not '$NEW_HOSTNAME'" ;;
  esac
  [ "${#NEW_HOSTNAME}" -le 63 ] || die "--hostname must be 63 characters at most, not ${#NEW_HOSTNAME}"
fi
# The unit keeps the service out of the home folders (ProtectHome=yes): installed there, it could never start.
for place in "$PREFIX" "$INSTANCE"; do
  case "$place" in
    /home | /home/* | /root | /root/* | /run/user | /run/user/*)
      die "the companion cannot be kept in $place: the service may not enter home folders; choose a folder outside /home and /root (the defaults are /opt/elephants-bluff and /var/lib/elephants-bluff)" ;;
    /*) ;;
    *) die "--prefix and --instance must be whole paths starting with /, not '$place'" ;;
  esac
done

# --- the system (read only: nothing is changed before all of these pass) ----------
[ -r "$OS_RELEASE" ] || die "cannot tell which system this is ($OS_RELEASE is missing)"
# shellcheck source=/dev/null
. "$OS_RELEASE"
major="${VERSION_ID%%.*}"
case "${ID:-}" in
  debian | raspbian) ;;
  *) die "this script is for Raspberry Pi OS (Debian), not ${PRETTY_NAME:-an unknown system}" ;;
esac
case "$major" in
  '' | *[!0-9]*) major=0 ;;
esac
if [ "$major" -lt 12 ]; then
  die "Raspberry Pi OS Bookworm (12) or later is needed, and this is ${PRETTY_NAME:-version ${VERSION_ID:-unknown}}: write a fresh Raspberry Pi OS (64-bit) card with Raspberry Pi Imager (deploy/README.md), then run me there"
fi
# The userland decides, not the kernel: 32-bit Pi OS on a Pi 4 runs a 64-bit kernel.
ARCH="$(dpkg --print-architecture 2>/dev/null || uname -m)"
case "$ARCH" in
  arm64 | aarch64) ;;
  armhf | armel | i386 | arm*)
    die "this is a 32-bit system ($ARCH): the companion's camera reader needs Raspberry Pi OS (64-bit); write that image with Raspberry Pi Imager, then run me there" ;;
  *) echo "install-pi: warning: this is $ARCH, not 64-bit ARM: fine for a trial, but it is not a Raspberry Pi" >&2 ;;
esac
[ "$(id -u)" -eq 0 ] || die "run me as root: sudo $0${*:+ $*}"
[ -f "$SRC/pyproject.toml" ] || die "run me from a checkout of the project (no pyproject.toml in $SRC)"
[ -f "$UNIT_SRC" ] || die "the unit file $UNIT_SRC is missing"
[ -f "$TESTED_VERSIONS" ] || die "the list of tested versions $TESTED_VERSIONS is missing: run 'git pull' or clone the project again"
[ -f "$LOCKED_VERSIONS" ] || die "the list of locked versions $LOCKED_VERSIONS is missing: run 'git pull' or clone the project again"

mkdir -p "$(dirname "$LOCK")"
exec 9>"$LOCK"
flock -n 9 || die "another install of the companion is running right now; wait until it has finished (it prints Done.), then run me again if you still need to"

NEW_VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$SRC/pyproject.toml" | head -n 1)"
OLD_VERSION="$("$PREFIX/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("elephants-bluff"))' 2>/dev/null || true)"
if [ -n "$OLD_VERSION" ] && [ -n "$NEW_VERSION" ] && [ "$OLD_VERSION" != "$NEW_VERSION" ] && [ "$ALLOW_DOWNGRADE" -eq 0 ] \
  && [ "$(printf '%s\n%s\n' "$OLD_VERSION" "$NEW_VERSION" | sort -V | tail -n 1)" = "$OLD_VERSION" ]; then
  die "this checkout is version $NEW_VERSION, older than the installed $OLD_VERSION, which stays installed; run 'git pull' for the newest, or run me again with --allow-downgrade if you mean to go back"
fi

# The port: free, or held by the companion this script installed before (an update),
# running or in safe mode (which answers /api/health with 503 and "status": "safe_mode";
# an update is the way out of safe mode for a log a newer version wrote, or for a bug).
port_holder="$(python3 "$SRC/deploy/ask_health.py" holder "$PORT")"
if [ "$port_holder" = "other" ]; then
  die "port $PORT is already used by another program on this Pi; stop that program, or choose another port with --port N"
fi
if [ "$port_holder" = "safe_mode" ]; then
  echo "==> The companion on port $PORT is in safe mode; installing over it"
fi

echo "==> Installing system packages (picamera2, lgpio, avahi for the .local name)"
apt-get update -qq -o APT::Update::Error-Mode=any >/dev/null 2>&1 \
  || die "apt cannot reach the package servers: connect the Pi to the network (check with 'ping -c 1 deb.debian.org'), then run me again; nothing was changed"
packages="python3-venv python3-pip avahi-daemon"
skipped=""
for pkg in $PI_ONLY_PACKAGES; do
  if apt-cache show "$pkg" >/dev/null 2>&1; then
    packages="$packages $pkg"
  elif [ "$SKIP_PI_ONLY" -eq 1 ]; then
    skipped="$skipped $pkg"
  else
    die "apt has no $pkg, which only the Raspberry Pi archive has: this is not Raspberry Pi OS; use Raspberry Pi OS (64-bit), or run me with --skip-pi-only-packages for a trial without camera and buttons; nothing was changed"
  fi
done
if [ -n "$skipped" ]; then
  echo "install-pi: skipped (only in the Raspberry Pi archive, and asked to skip):$skipped" >&2
fi
# shellcheck disable=SC2086 # one word per package
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages >/dev/null \
  || die "apt could not install$packages (see above); the companion itself was not touched"

if [ -n "$NEW_HOSTNAME" ]; then
  echo "==> Naming this Pi $NEW_HOSTNAME (reachable as $NEW_HOSTNAME.local)"
  OLD_HOSTNAME="$(hostname)"
  hostnamectl set-hostname "$NEW_HOSTNAME"
  # The Pi's own name must resolve on the Pi (Raspberry Pi OS keeps it on /etc/hosts' 127.0.1.1 line, as raspi-config
  # does), or every sudo says "unable to resolve host"; and avahi announces the new .local name only once restarted.
  if grep -q '^127\.0\.1\.1[[:space:]]' /etc/hosts 2>/dev/null; then
    sed -i "s/^127\.0\.1\.1[[:space:]].*\$/127.0.1.1\t$NEW_HOSTNAME/" /etc/hosts || HOSTS_FAILED=1
  else
    printf '127.0.1.1\t%s\n' "$NEW_HOSTNAME" >>/etc/hosts || HOSTS_FAILED=1
  fi
  if [ -n "${HOSTS_FAILED:-}" ]; then
    echo "install-pi: /etc/hosts could not be changed: add the line '127.0.1.1 $NEW_HOSTNAME' to it, or sudo says it cannot resolve the name" >&2
  fi
  if [ -d "$SYSTEMD_DIR" ] && [ "$OLD_HOSTNAME" != "$NEW_HOSTNAME" ]; then
    systemctl try-restart avahi-daemon.service || echo "install-pi: avahi did not restart; $NEW_HOSTNAME.local answers after a reboot" >&2
  fi
fi
HOST_NAME="$(hostname)"

# --- the program: a new virtual environment, switched to only once it works --------
# $PREFIX/venv is a link to one of $PREFIX/venvs/*; a failed install leaves it alone.
echo "==> Installing the companion $NEW_VERSION into a new environment under $PREFIX/venvs"
install -d -m 0755 "$PREFIX" "$PREFIX/venvs"
VENV_NEW="$PREFIX/venvs/$NEW_VERSION-$(date +%Y%m%d-%H%M%S)"
# a second run within the same second would otherwise build into (and then drop as
# "the version before") the folder the companion runs from
n=1
while [ -e "$VENV_NEW" ] || [ -L "$VENV_NEW" ]; do
  VENV_NEW="$PREFIX/venvs/$NEW_VERSION-$(date +%Y%m%d-%H%M%S)-$n"
  n=$((n + 1))
done
LOG="$(mktemp)"
BUILD_SRC=""
cleanup() {
  rm -f "$LOG"
  if [ -n "$BUILD_SRC" ]; then rm -rf "$BUILD_SRC"; fi
  if [ -n "${VENV_NEW:-}" ] && [ -d "$VENV_NEW" ] && [ "$(readlink -f "$PREFIX/venv")" != "$VENV_NEW" ]; then
    rm -rf "$VENV_NEW"
  fi
}
trap cleanup EXIT
still_there() {
  if [ -n "$OLD_VERSION" ]; then
    echo "the installed version $OLD_VERSION is untouched and keeps running"
  else
    echo "nothing of the companion was installed"
  fi
}
# The project is built from a clean copy of its files, never in the checkout: setuptools
# keeps a build/ folder there and copies new files into it but never removes gone ones,
# so a file the project deleted (a withdrawn model: the reader takes the last name in
# sorted order) shipped again in every later wheel. In a git checkout the copy holds the
# tracked files as they are in the working tree (local edits included, untracked files
# not); elsewhere (an unpacked archive) every file but build output, caches and venvs.
BUILD_SRC="$(mktemp -d)"
copy_sources() {
  if command -v git >/dev/null 2>&1 \
    && [ "$(git -c safe.directory="$SRC" -C "$SRC" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$SRC" && pwd -P)" ]; then
    git -c safe.directory="$SRC" -C "$SRC" ls-files -z --cached \
      | while IFS= read -r -d '' f; do if [ -e "$SRC/$f" ]; then printf '%s\0' "$f"; fi; done \
      | tar -C "$SRC" --null --no-recursion -T - -cf - \
      | tar -C "$BUILD_SRC" -xf -
  else
    tar -C "$SRC" --exclude=./build --exclude=./dist --exclude='*.egg-info' --exclude=./.git \
      --exclude=./.venv --exclude=__pycache__ -cf - . | tar -C "$BUILD_SRC" -xf -
  fi
}
copy_sources || die "could not copy the project's files from $SRC to build them; $(still_there)"
# --system-site-packages: picamera2 and libcamera come from apt, not from PyPI.
python3 -m venv --system-site-packages "$VENV_NEW"
# The setuptools venv seeds goes first: --ignore-installed (below) writes the locked
# one over its files but leaves its record, and the venv would hold two setuptools.
"$VENV_NEW/bin/pip" uninstall --yes setuptools >"$LOG" 2>&1 || {
  tail -n 5 "$LOG" >&2
  die "pip could not prepare the new environment (its last lines are above); $(still_there)"
}
# The venv holds its own numpy 2 (OpenCV needs it). picamera2's JPEG helper from apt
# (simplejpeg) is built for the system's numpy 1 and fails to import under numpy 2
# ("numpy.dtype size changed"), so the project's `pi` extra puts a simplejpeg built
# for numpy 2 in the venv, where Python finds it before the system's.
# --ignore-installed: pip counts the system's packages as installed, and would keep
# apt's simplejpeg (its version meets the extra's) and other apt builds; every
# dependency goes into the venv instead, at the version the lists of tested and
# locked versions name.
# --only-binary: every dependency comes as a wheel; nothing is compiled on the Pi
# (the project itself is pure Python and is packed into a wheel here).
"$VENV_NEW/bin/pip" install --ignore-installed --only-binary=:all: --progress-bar off \
  --constraint "$TESTED_VERSIONS" --constraint "$LOCKED_VERSIONS" "${BUILD_SRC}[pi]" >>"$LOG" 2>&1 || {
  tail -n 15 "$LOG" >&2
  die "pip could not install version $NEW_VERSION (its last lines are above); $(still_there). Check that the Pi reaches the internet (pip downloads from PyPI), then run me again"
}
built="$(sed -n 's/^ *Building wheel for \([^ ]*\).*/\1/p' "$LOG" | grep -v '^elephants[-_]bluff$' || true)"
[ -z "$built" ] || die "pip compiled $built from source, which must come as a wheel; $(still_there)"
echo "    (no package was built from source; pip's log: $(grep -c '' "$LOG") lines)"
imports="gpiozero, cv2, onnxruntime, numpy, simplejpeg"
case " $skipped " in
  *python3-picamera2*) ;;
  *) imports="picamera2, $imports" ;;
esac
"$VENV_NEW/bin/python" -c "import $imports" \
  || die "the new version is installed but cannot import $imports (see above; a numpy mismatch shows as 'numpy.dtype size changed'); $(still_there)"
"$VENV_NEW/bin/elephants-bluff" --version >/dev/null \
  || die "the new version's elephants-bluff command does not start (see above); $(still_there)"

# --- the user -------------------------------------------------------------------
if ! id "$APP_USER" >/dev/null 2>&1; then
  echo "==> Creating the unprivileged user $APP_USER"
  useradd --system --user-group --home-dir "$INSTANCE" --no-create-home --shell /usr/sbin/nologin "$APP_USER"
fi
for group in gpio video; do
  getent group "$group" >/dev/null || groupadd --system "$group"
done
usermod -a -G gpio,video "$APP_USER"

# --- the settings (first install only) --------------------------------------------
install -d -o "$APP_USER" -g "$APP_USER" -m 0750 "$INSTANCE"
if [ ! -f "$INSTANCE/config.toml" ]; then
  echo "==> Writing the settings $INSTANCE/config.toml"
  EB_INSTANCE="$INSTANCE" EB_HOST="$HOST_NAME" runuser -u "$APP_USER" -- "$VENV_NEW/bin/python" - <<'PY'
import os, secrets
from pathlib import Path
from companion.app.settings import CONFIG_NAME, all_settings, render_config

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
"$VENV_NEW/bin/python" - "$INSTANCE/config.toml" <<'PY' || die "the settings file is not usable; fix it and run me again ($(still_there))"
import sys
from pathlib import Path
from companion.core.errors import ElephantsBluffError
from companion.app.settings import Settings
from firmware.pins import check_pin_map

try:
    check_pin_map(Settings.load(Path(sys.argv[1]), environ={}))
except ElephantsBluffError as exc:
    sys.exit(f"install-pi: {exc.message}")
PY

# --- switch to the new version ----------------------------------------------------
# to go back to, said if the new one does not answer; none on a first install (readlink -f prints a missing path too)
PREVIOUS_VENV=""
if [ -e "$PREFIX/venv" ]; then PREVIOUS_VENV="$(readlink -f "$PREFIX/venv")"; fi
if [ -d "$PREFIX/venv" ] && [ ! -L "$PREFIX/venv" ]; then
  # an install from before the venvs/ folder: keep it as the previous version
  PREVIOUS_VENV="$PREFIX/venvs/previous-$(date +%Y%m%d-%H%M%S)"
  mv "$PREFIX/venv" "$PREVIOUS_VENV"
fi
ln -sfn "$VENV_NEW" "$PREFIX/venv.new"
mv -T "$PREFIX/venv.new" "$PREFIX/venv"
# keep the new version and the one that ran before it (to go back by hand), whatever their ages: after a
# rollback by hand the one running is older than the one rolled back from; drop every other
KEEP_NEW="$(readlink -f "$VENV_NEW")"
KEEP_PREVIOUS="$(if [ -n "$PREVIOUS_VENV" ]; then readlink -f "$PREVIOUS_VENV"; fi)"
for old in "$PREFIX"/venvs/*/; do
  old="$(readlink -f "$old")"
  [ "$old" = "$KEEP_NEW" ] || [ "$old" = "$KEEP_PREVIOUS" ] || rm -rf "$old"
done
echo "==> The companion $NEW_VERSION is installed${OLD_VERSION:+ (was $OLD_VERSION)}"

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
# Remembered for the next run (an update), which reuses what it is not given again.
install -d -m 0755 "$(dirname "$OPTIONS_FILE")"
cat >"$OPTIONS_FILE.tmp" <<OPTIONS
# Written by deploy/install-pi.sh: the options of the last install. The next run
# (an update) reuses each one it is not given again; give it again to change it.
user=$APP_USER
prefix=$PREFIX
instance=$INSTANCE
port=$PORT
OPTIONS
mv "$OPTIONS_FILE.tmp" "$OPTIONS_FILE"
if [ -d "$SYSTEMD_DIR" ]; then
  systemctl daemon-reload
  systemctl enable elephants-bluff.service >/dev/null 2>&1
  if [ "$START" -eq 1 ]; then
    systemctl restart elephants-bluff.service
    echo "==> Waiting for the companion to answer on port $PORT (up to $ANSWER_WAIT_S s)"
    # "Done." only once it answers: a version that crashes at start, or comes up in safe mode, is said here
    answer="$(python3 "$SRC/deploy/ask_health.py" wait "$PORT" "$ANSWER_WAIT_S")"
    back=""
    [ -z "$PREVIOUS_VENV" ] || back="; to go back to the version before: sudo ln -sfn $PREVIOUS_VENV $PREFIX/venv && sudo systemctl restart elephants-bluff"
    case "$answer" in
      answers) echo "==> The companion $NEW_VERSION answers" ;;
      safe_mode*)
        systemctl --no-pager --lines=5 status elephants-bluff.service || true
        die "the companion $NEW_VERSION started in safe mode: ${answer#safe_mode }; the page at http://$HOST_NAME.local:$PORT says the same$back" ;;
      *)
        systemctl --no-pager --lines=5 status elephants-bluff.service || true
        die "the companion $NEW_VERSION did not answer on port $PORT within $ANSWER_WAIT_S s; see why with: journalctl -u elephants-bluff -n 50$back" ;;
    esac
  elif systemctl is-active --quiet elephants-bluff.service; then
    # the running companion keeps the version it started with, and answers only to the Pi's name as it was then
    echo "==> Not restarted (--no-start): the companion running now keeps its version and the Pi's name until: sudo systemctl restart elephants-bluff"
  fi
else
  # No systemd running (a chroot or a container): enable the unit in the files; it starts at the next boot.
  systemctl --root=/ enable elephants-bluff.service >/dev/null 2>&1 \
    || die "the unit $UNIT_DST could not be enabled (systemctl --root=/ enable failed)"
  echo "install-pi: systemd is not running here, so the service was enabled but not started; it starts at the next boot" >&2
fi

PIN="$(sed -n 's/^pin = "\(.*\)"$/\1/p' "$INSTANCE/config.toml" | head -n 1)"
echo
echo "Done. On a tablet on the same network open:  http://$HOST_NAME.local:$PORT"
echo "Table PIN: ${PIN:-see $INSTANCE/config.toml}"
echo "Logs: journalctl -u elephants-bluff -f"
