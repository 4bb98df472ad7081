#!/usr/bin/env bash
# Builds, once, the Debian Bookworm arm64 root that `make pi-rehearsal` and
# `make pi-check` run the Pi's software in (under qemu-user), and reuses it after.
#
#   sudo deploy/pi/root.sh [--cache DIR] [--rebuild]
#
# The root lives outside the repository, in DIR (default
# /var/cache/elephants-bluff); its stamp file names the recipe it was built
# with, and a root of another recipe is rebuilt. Nobody runs in the cached root
# itself: each rehearsal works on a fresh copy (deploy/pi/rehearsal.py).
# Prints the root's folder as its last line.
set -euo pipefail

CACHE="${PI_CACHE:-/var/cache/elephants-bluff}"
REBUILD=0
SUITE="bookworm"
MIRROR="http://deb.debian.org/debian"
# Bump when the recipe below changes: a cached root of another recipe is rebuilt.
# BASE is what debootstrap makes; EXTRAS is added on top (and to an older BASE root).
BASE="4 $SUITE arm64 python3 python3-venv python3-pip ca-certificates, downloaded: avahi-daemon"
EXTRAS="systemd"
RECIPE="$BASE; extras: $EXTRAS"

die() {
  echo "pi-root: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --cache) CACHE="${2:?--cache needs a folder}"; shift 2 ;;
    --rebuild) REBUILD=1; shift ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "building the arm64 root needs root (debootstrap and chroot): run me with sudo"
ROOT="$CACHE/pi-root-$SUITE-arm64"
STAMP="$ROOT.stamp"

# --- the tools: debootstrap and qemu-user with binfmt -----------------------------
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -x /usr/bin/qemu-aarch64-static ] || need+=(qemu-user-static)
command -v update-binfmts >/dev/null || need+=(binfmt-support)
if [ ${#need[@]} -gt 0 ]; then
  echo "pi-root: installing ${need[*]} from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc \
    || die "cannot mount binfmt_misc, so arm64 programs cannot run here (a container without that right?)"
fi
update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null \
  || die "qemu-aarch64 is not registered with binfmt_misc (update-binfmts --enable qemu-aarch64 failed)"

# What a Pi OS image has on top of the base: systemd (systemctl, systemd-analyze).
add_extras() {
  local root="$1"
  chroot "$root" apt-get update -qq
  # shellcheck disable=SC2086 # one word per package
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $EXTRAS >/dev/null
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.pi-root.lock"
flock -w 3600 9 || die "another build of the arm64 root has held $CACHE/.pi-root.lock for an hour; is it stuck?"

# --- reuse ----------------------------------------------------------------------
if [ "$REBUILD" -eq 0 ] && [ -d "$ROOT" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$BASE" ]; then
  echo "pi-root: adding $EXTRAS to the cached root"
  add_extras "$ROOT"
  echo "$RECIPE" >"$STAMP"
fi
if [ "$REBUILD" -eq 0 ] && [ -d "$ROOT" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$RECIPE" ]; then
  echo "pi-root: reusing $ROOT (built $(date -u -r "$STAMP" +%Y-%m-%dT%H:%MZ))"
  echo "$ROOT"
  exit 0
fi

# --- build ----------------------------------------------------------------------
TMP="$ROOT.building"
rm -rf "$TMP"
echo "pi-root: building $ROOT with debootstrap (arm64 under qemu: 10 to 20 minutes)"
start=$(date +%s)
debootstrap --arch=arm64 --variant=minbase \
  --include=python3,python3-venv,python3-pip,ca-certificates,apt-utils \
  "$SUITE" "$TMP" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
  || { tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed (whole log: $CACHE/debootstrap.log)"; }
# No service starts inside the root: there is no init there.
printf '#!/bin/sh\nexit 101\n' >"$TMP/usr/sbin/policy-rc.d"
chmod 0755 "$TMP/usr/sbin/policy-rc.d"
# What a Pi OS image has and a minbase root lacks.
cat >"$TMP/etc/apt/sources.list" <<SOURCES
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb http://deb.debian.org/debian-security $SUITE-security main
SOURCES
echo "raspberrypi" >"$TMP/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\traspberrypi\n' >"$TMP/etc/hosts"
cp /etc/resolv.conf "$TMP/etc/resolv.conf"
# The packages the install script asks apt for are downloaded into the root's
# apt cache now, so a rehearsal's install time does not count their download.
chroot "$TMP" apt-get update -qq
chroot "$TMP" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --download-only \
  --no-install-recommends avahi-daemon >/dev/null
add_extras "$TMP"
rm -rf "$ROOT"
mv "$TMP" "$ROOT"
echo "$RECIPE" >"$STAMP"
echo "pi-root: built in $(($(date +%s) - start)) s"
echo "$ROOT"
