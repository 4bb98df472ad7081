#!/usr/bin/env bash
# Backs up and restores the companion's instance folder (settings with the PIN,
# the game log, the saved Bluff frames), one command each:
#   sudo deploy/instance.sh backup [FILE]     (default: ./elephants-bluff-backup-DATE.tar.gz)
#   sudo deploy/instance.sh restore FILE
# Options: --instance DIR, --prefix DIR, --user NAME (as given to install-pi.sh).
#
# The service is stopped while the folder is read or replaced and started again
# after. A backup records the companion's version; a backup of another version
# is refused, never mixed in. The folder a restore replaces is kept beside it.
# A restore ends every device's session: each types the table PIN again.
set -euo pipefail

APP_USER="elephants"
PREFIX="/opt/elephants-bluff"
INSTANCE="/var/lib/elephants-bluff"
MARK="elephants-bluff-backup.txt"
SERVICE="elephants-bluff.service"

die() {
  echo "instance: $*" >&2
  exit 1
}

# A tool's error lines as one line of a sentence: its blank lines dropped, the others joined by "; ".
one_line() {
  printf '%s\n' "$1" | sed '/^[[:space:]]*$/d' | paste -sd ';' - | sed 's/;/; /g'
}

usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
}

ACTION=""
FILE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --user) APP_USER="${2:?--user needs a name}"; shift 2 ;;
    --prefix) PREFIX="${2:?--prefix needs a folder}"; shift 2 ;;
    --instance) INSTANCE="${2:?--instance needs a folder}"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    backup | restore)
      [ -z "$ACTION" ] || die "say backup or restore once, not both"
      ACTION="$1"; shift ;;
    -*) usage >&2; die "unknown option: $1" ;;
    *)
      [ -z "$FILE" ] || die "one backup file at a time, not '$FILE' and '$1'"
      FILE="$1"; shift ;;
  esac
done
[ -n "$ACTION" ] || { usage >&2; die "say what to do: backup or restore"; }
[ "$(id -u)" -eq 0 ] || die "run me as root: sudo $0 $ACTION${FILE:+ $FILE}"

installed_version() {
  "$PREFIX/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("elephants-bluff"))' 2>/dev/null || echo "unknown"
}

WAS_RUNNING=0
stop_service() {
  command -v systemctl >/dev/null || return 0
  # running, or between two starts (a unit restarting after a failure): stopped either way, so it cannot start in the
  # middle of the swap; started again after only if it was running
  case "$(systemctl is-active "$SERVICE" 2>/dev/null || true)" in
    active | activating | reloading) WAS_RUNNING=1 ;;
  esac
  systemctl stop "$SERVICE" 2>/dev/null || true
}
start_again() {
  if [ "$WAS_RUNNING" -eq 1 ]; then
    systemctl start "$SERVICE" || echo "instance: warning: the service did not start again; see journalctl -u elephants-bluff" >&2
  fi
}

if [ "$ACTION" = backup ]; then
  [ -f "$INSTANCE/config.toml" ] || die "there is nothing to back up: $INSTANCE holds no config.toml (is --instance right?)"
  FILE="${FILE:-elephants-bluff-backup-$(date +%Y-%m-%d-%H%M).tar.gz}"
  [ ! -e "$FILE" ] || die "$FILE already exists; give another file name"
  # the destination is tried before the table is stopped: a typo must not stop a game for nothing
  [ -d "$(dirname "$FILE")" ] || die "the folder $(dirname "$FILE") does not exist; nothing was backed up and the table was not stopped"
  : 2>/dev/null >"$FILE.tmp" || die "$FILE cannot be written there (a read-only or full folder?); nothing was backed up and the table was not stopped"
  VERSION="$(installed_version)"
  MARK_DIR="$(mktemp -d)"
  trap 'rm -rf "$MARK_DIR"; start_again' EXIT
  # The settings may keep the game log or the photos outside the instance folder (an absolute path, a USB stick):
  # those are not in the folder's backup, and are said, not silently left out. A game log kept inside it, wherever
  # (a subfolder, another name), is named in $MARK_DIR/database for the check after the backup.
  OUTSIDE="$(python3 - "$INSTANCE" "$MARK_DIR/database" <<'WHERE' 2>/dev/null || true
import os, sys, tomllib

instance = os.path.realpath(sys.argv[1])
try:
    with open(os.path.join(instance, "config.toml"), "rb") as file:
        storage = tomllib.load(file).get("storage", {})
except (OSError, ValueError):
    storage = {}
for key, default in (("database", "game-log.sqlite3"), ("frames_dir", "frames")):
    path = os.path.realpath(os.path.join(instance, str(storage.get(key, default))))
    if os.path.commonpath([instance, path]) != instance:
        print(f"storage.{key} = {path}")
    elif key == "database":
        with open(sys.argv[2], "w", encoding="utf-8") as named:
            named.write(os.path.relpath(path, instance))
WHERE
)"
  printf 'version=%s\nmade=%s\ninstance=%s\n' "$VERSION" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$INSTANCE" >"$MARK_DIR/$MARK"
  stop_service
  if ! ERR="$(tar -czf "$FILE.tmp" -C "$MARK_DIR" "$MARK" -C "$INSTANCE" . 2>&1)"; then
    rm -f "$FILE.tmp"
    case "$ERR" in
      *"No space left"*) die "the folder of $FILE is full: the backup did not fit and nothing was backed up; choose a place with more room (a USB stick)" ;;
      *) die "the backup could not be written to $FILE: $(one_line "$ERR")" ;;
    esac
  fi
  mv "$FILE.tmp" "$FILE"
  # Copies of the game log and the device list as backed up (the service is still stopped: the same bytes), checked
  # by SQLite once the table plays again: a damaged one is still backed up (it is the table's, and may be mended),
  # but said, so nobody keeps it as their one good copy. Each keeps its path in the folder, and its write-ahead log.
  mkdir "$MARK_DIR/logs"
  DATABASE="$(cat "$MARK_DIR/database" 2>/dev/null || true)"
  for log in "$INSTANCE"/*.sqlite3 ${DATABASE:+"$INSTANCE/$DATABASE"}; do
    if [ -f "$log" ]; then
      relative="${log#"$INSTANCE"/}"
      mkdir -p "$MARK_DIR/logs/$(dirname "$relative")"
      cp "$log" "$MARK_DIR/logs/$relative"
      if [ -f "$log-wal" ]; then cp "$log-wal" "$MARK_DIR/logs/$relative-wal"; fi
    fi
  done
  start_again
  WAS_RUNNING=0
  echo "Backed up $INSTANCE (version $VERSION) to $FILE"
  DAMAGED="$(python3 - "$MARK_DIR/logs" <<'CHECK' 2>&1 || true
import pathlib, sqlite3, sys

root = pathlib.Path(sys.argv[1])
for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.endswith("-wal")):
    try:
        db = sqlite3.connect(path)
        found = [row[0] for row in db.execute("PRAGMA quick_check")]
        db.close()
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    if found != ["ok"]:
        print(f"{path.relative_to(root)} ({found[0]})")
CHECK
)"
  if [ -n "$OUTSIDE" ]; then
    echo "instance: warning: not in this backup, as the settings keep them outside $INSTANCE: $(one_line "$OUTSIDE"); copy them yourself" >&2
  fi
  if [ -n "$DAMAGED" ]; then
    echo "instance: warning: SQLite finds damage in $(one_line "$DAMAGED"); it is backed up as it was: keep an older backup too, and see deploy/README.md (Backup and restore)" >&2
  fi
  exit 0
fi

# --- restore ----------------------------------------------------------------------
# The folders earlier restores kept, with their size, after $1 and before $2; nothing where there are none. Each is
# a whole instance folder, photos and all: on an SD card they pile up, so the restore names them.
earlier_copies() {
  local found=""
  for copy in "$INSTANCE".before-restore-*; do
    [ -d "$copy" ] && [ "$copy" != "${KEPT:-}" ] && found="$found $copy ($(du -sh "$copy" | cut -f1))"
  done
  [ -z "$found" ] || printf '%s%s%s' "$1" "$found" "$2"
}
[ -n "$FILE" ] || die "say which backup to restore: sudo $0 restore FILE"
[ -r "$FILE" ] || die "cannot read the backup $FILE"
MADE_BY="$(tar -xzOf "$FILE" "./$MARK" 2>/dev/null || tar -xzOf "$FILE" "$MARK" 2>/dev/null || true)"
[ -n "$MADE_BY" ] || die "$FILE is not a backup made by 'deploy/instance.sh backup' (it has no $MARK)"
BACKUP_VERSION="$(printf '%s\n' "$MADE_BY" | sed -n 's/^version=//p')"
VERSION="$(installed_version)"
if [ "$BACKUP_VERSION" != "$VERSION" ]; then
  die "this backup comes from version $BACKUP_VERSION and the installed companion is $VERSION, so nothing was restored: install version $BACKUP_VERSION first (deploy/README.md, Updating), restore, then update"
fi
id "$APP_USER" >/dev/null 2>&1 || die "there is no user $APP_USER; install the companion first (deploy/install-pi.sh)"
NEW="$(mktemp -d "$(dirname "$INSTANCE")/.restore.XXXXXX")"
trap 'rm -rf "$NEW"; start_again' EXIT
if ! ERR="$(tar -xzf "$FILE" -C "$NEW" 2>&1)"; then
  case "$ERR" in
    *"No space left"*)
      NEED="$(tar -tvzf "$FILE" | awk '{ s += $3 } END { printf "%.1f", s / 1048576 }')"
      # free: the room the unpacking took (given back as it is removed) and what was left
      FREE="$(( $(df -Pk "$(dirname "$INSTANCE")" | awk 'NR == 2 { print $4 }') + $(du -sk "$NEW" | cut -f1) ))"
      FREE="$(awk -v k="$FREE" 'BEGIN { printf "%.1f", k / 1024 }')"
      die "there is no room left beside $INSTANCE to unpack the backup: it needs about $NEED MB and $FREE MB are free$(earlier_copies " (copies kept by earlier restores take room too:" ")"); nothing was restored" ;;
    *) die "the backup $FILE could not be unpacked (damaged?): $(one_line "$ERR"); nothing was restored" ;;
  esac
fi
rm -f "$NEW/$MARK"
[ -f "$NEW/config.toml" ] || die "the backup $FILE holds no config.toml; nothing was restored"
# The devices let in when the backup was made are not let in again: one ended since (a guest's phone) would be.
if [ -f "$NEW/auth.sqlite3" ]; then
  python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", ("sessions",)).fetchone():
    db.execute("DELETE FROM sessions")
db.commit()
db.close()' "$NEW/auth.sqlite3" 2>/dev/null || die "the backup's list of devices (auth.sqlite3) could not be read (damaged?); nothing was restored"
fi
chown -R "$APP_USER:" "$NEW"
chmod 0750 "$NEW"
stop_service
KEPT=""
if [ -e "$INSTANCE" ]; then
  STAMP="$INSTANCE.before-restore-$(date +%Y%m%d-%H%M%S)"
  KEPT="$STAMP"
  n=1
  while [ -e "$KEPT" ]; do  # two restores in one second: the second keeps its own copy beside the first's
    n=$((n + 1))
    KEPT="$STAMP-$n"
  done
  # stopped between the two moves (Ctrl-C, a power cut aside): the folder that was there goes back
  trap 'if [ ! -e "$INSTANCE" ] && [ -e "$KEPT" ]; then mv -T "$KEPT" "$INSTANCE"; fi; rm -rf "$NEW"; start_again' EXIT
  mv -T "$INSTANCE" "$KEPT"
fi
mv -T "$NEW" "$INSTANCE"  # -T: never into a folder something made meanwhile
echo "Restored $INSTANCE from $FILE (version $VERSION)${KEPT:+; the folder it replaced is kept as $KEPT}; every device types the table PIN again"
earlier_copies "Folders kept by earlier restores, each a whole instance folder:" "; delete those you no longer need (sudo rm -rf FOLDER).
"
