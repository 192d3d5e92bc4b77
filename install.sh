#!/usr/bin/env bash
# Signalboard installer: puts the single binary in /usr/local/bin, runs it as a systemd service under
# its own user, with data in /var/lib/signalboard and settings in /etc/signalboard/signalboard.env.
# Re-running it upgrades in place (after a backup of the database: with the old binary on SQLite,
# with pg_dump on PostgreSQL) and never overwrites the settings file. Run `./install.sh --help` for
# the options.
set -euo pipefail

readonly PROG="signalboard-install"
readonly SERVICE="signalboard"
readonly SERVICE_USER="signalboard"
readonly SERVICE_GROUP="signalboard"
# The real paths. With --root DIR every file goes under DIR, but the unit and the settings file
# still name these.
readonly BIN_PATH="/usr/local/bin/signalboard"
readonly DATA_DIR="/var/lib/signalboard"
readonly CONF_DIR="/etc/signalboard"
readonly ENV_FILE="$CONF_DIR/signalboard.env"
readonly UNIT_PATH="/etc/systemd/system/$SERVICE.service"
readonly DROPIN_DIR="/etc/systemd/system/$SERVICE.service.d"
readonly DEFAULT_PORT=8080
readonly HEALTH_TIMEOUT=15

SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR

say() { printf '%s: %s\n' "$PROG" "$*"; }
warn() { printf '%s: warning: %s\n' "$PROG" "$*" >&2; }
die() {
  printf '%s: error: %s\n' "$PROG" "$*" >&2
  exit 1
}
usage_error() {
  printf '%s: %s\n' "$PROG" "$*" >&2
  printf "%s: run '%s --help' for usage\n" "$PROG" "$0" >&2
  exit 2
}

usage() {
  cat <<EOF
usage: install.sh [options]

Installs (or upgrades) Signalboard as a systemd service:
  $BIN_PATH                         the binary
  $DATA_DIR                               data (signalboard.db, backups/), owned by user $SERVICE_USER
  $ENV_FILE                  settings (created once, never overwritten)
  $UNIT_PATH          the unit (rewritten on every run)
An existing installation's database is backed up before the new binary replaces it: with the old
binary on SQLite, with pg_dump on PostgreSQL (DATABASE_URL or DATABASE_URL_FILE in the settings).

options:
  --binary PATH|URL   the signalboard binary to install: a file, or an http(s) URL to download.
                      Default: build it from this checkout (npm install && npm run build).
  --root DIR          stage every file under DIR instead of / (image builds, tests): no users
                      are created and systemctl is not called. Does not need root.
  --port N            port written to a new settings file (default $DEFAULT_PORT)
  --base-url URL      public URL written to a new settings file (default http://HOSTNAME:PORT)
  --no-start          install and enable, but do not (re)start the service
  --no-backup         upgrade without backing the database up first (you took a backup yourself)
  --uninstall         stop and remove the service and the binary; keep data and settings
  --purge             with --uninstall: also delete $DATA_DIR (the data and its backups),
                      $CONF_DIR and the user, after asking
  --yes               with --purge: delete without asking (scripts)
  -h, --help          print this help

examples:
  sudo ./install.sh --base-url https://signalboard.example.com
  sudo ./install.sh --binary ./signalboard
  sudo ./install.sh --binary https://example.com/releases/signalboard-linux-x64
  sudo ./install.sh --uninstall [--purge [--yes]]
EOF
}

# --- options -----------------------------------------------------------------------------------

ORIGINAL_ARGS=""
if [[ $# -gt 0 ]]; then printf -v ORIGINAL_ARGS ' %q' "$@"; fi
readonly ORIGINAL_ARGS

BINARY=""
ROOT=""
ROOT_MODE=0
PORT_OPT=""
BASE_URL_OPT=""
NO_START=0
NO_BACKUP=0
UNINSTALL=0
PURGE=0
YES=0

need_value() {
  # $1 option name, $2 number of remaining arguments (including the option)
  [[ $2 -ge 2 ]] || usage_error "option $1 needs a value"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    -h | --help)
      usage
      exit 0
      ;;
    --binary)
      need_value "$1" "$#"
      BINARY="$2"
      shift 2
      ;;
    --binary=*)
      BINARY="${1#*=}"
      shift
      ;;
    --root)
      need_value "$1" "$#"
      ROOT="$2"
      ROOT_MODE=1
      shift 2
      ;;
    --root=*)
      ROOT="${1#*=}"
      ROOT_MODE=1
      shift
      ;;
    --port)
      need_value "$1" "$#"
      PORT_OPT="$2"
      shift 2
      ;;
    --port=*)
      PORT_OPT="${1#*=}"
      shift
      ;;
    --base-url)
      need_value "$1" "$#"
      BASE_URL_OPT="$2"
      shift 2
      ;;
    --base-url=*)
      BASE_URL_OPT="${1#*=}"
      shift
      ;;
    --no-start)
      NO_START=1
      shift
      ;;
    --no-backup)
      NO_BACKUP=1
      shift
      ;;
    --yes)
      YES=1
      shift
      ;;
    --uninstall)
      UNINSTALL=1
      shift
      ;;
    --purge)
      PURGE=1
      shift
      ;;
    *)
      usage_error "unknown option: $1"
      ;;
  esac
done

if [[ $PURGE -eq 1 && $UNINSTALL -eq 0 ]]; then usage_error "--purge only goes with --uninstall"; fi
if [[ $YES -eq 1 && $PURGE -eq 0 ]]; then usage_error "--yes only goes with --uninstall --purge"; fi
if [[ -n $PORT_OPT ]]; then
  if ! [[ $PORT_OPT =~ ^[0-9]{1,5}$ ]] || ((10#$PORT_OPT < 1 || 10#$PORT_OPT > 65535)); then
    usage_error "--port must be a number from 1 to 65535, not '$PORT_OPT'"
  fi
  PORT_OPT=$((10#$PORT_OPT))
fi
if [[ -n $BASE_URL_OPT ]]; then
  if ! [[ $BASE_URL_OPT =~ ^https?://[^[:space:]\"\'\\]+$ ]]; then
    usage_error "--base-url must be an http:// or https:// URL without spaces or quotes, not '$BASE_URL_OPT'"
  fi
  BASE_URL_OPT="${BASE_URL_OPT%/}"
fi

if [[ $ROOT_MODE -eq 1 ]]; then
  [[ -n $ROOT ]] || usage_error "--root needs a directory"
  mkdir -p -- "$ROOT" || die "cannot create the staging root $ROOT"
  ROOT="$(cd -- "$ROOT" && pwd -P)"
  [[ $ROOT != "/" ]] || usage_error "--root / is the real root: leave --root out to install for real"
else
  [[ $(id -u) -eq 0 ]] || die "must be run as root (try: sudo $0${ORIGINAL_ARGS}); to stage files without root use --root DIR"
  command -v systemctl >/dev/null 2>&1 ||
    die "systemctl not found: this installer sets up a systemd service (use --root DIR to only stage the files)"
fi

# Staged paths: what this run reads and writes.
R_BIN="$ROOT$BIN_PATH"
R_DATA="$ROOT$DATA_DIR"
R_CONF="$ROOT$CONF_DIR"
R_ENV="$ROOT$ENV_FILE"
R_UNIT="$ROOT$UNIT_PATH"
R_DROPIN="$ROOT$DROPIN_DIR"

# --- helpers -----------------------------------------------------------------------------------

WORK_DIR=""
TEMP_FILES=()
cleanup() {
  local f
  for f in "${TEMP_FILES[@]+"${TEMP_FILES[@]}"}"; do rm -f -- "$f"; done
  if [[ -n $WORK_DIR ]]; then rm -rf -- "$WORK_DIR"; fi
}
trap cleanup EXIT

work_dir() {
  if [[ -z $WORK_DIR ]]; then WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/signalboard-install.XXXXXX")"; fi
}

user_exists() { id -u "$SERVICE_USER" >/dev/null 2>&1; }
group_exists() { getent group "$SERVICE_GROUP" >/dev/null 2>&1; }
is_root() { [[ $(id -u) -eq 0 ]]; }

# chown only when it can work: as root, to owners that exist (in --root mode they may not).
chown_if_possible() {
  local owner="$1" group="$2"
  shift 2
  is_root || return 0
  if [[ $owner != root ]] && ! id -u "$owner" >/dev/null 2>&1; then return 0; fi
  if ! getent group "$group" >/dev/null 2>&1; then group=""; fi
  chown "$owner${group:+:$group}" "$@"
}

# Writes stdin to FILE atomically (temp file in the same directory, then mv) with MODE.
write_atomic() {
  local file="$1" mode="$2" owner="$3" group="$4" tmp
  mkdir -p -- "$(dirname -- "$file")"
  tmp="$(mktemp "$(dirname -- "$file")/.$(basename -- "$file").XXXXXX")"
  TEMP_FILES+=("$tmp")
  cat >"$tmp"
  chmod "$mode" "$tmp"
  chown_if_possible "$owner" "$group" "$tmp"
  mv -f -- "$tmp" "$file"
}

# The value of KEY in an environment file (last assignment wins, surrounding quotes removed).
env_value() {
  local key="$1" file="$2" line value=""
  [[ -r $file ]] || return 0
  while IFS= read -r line || [[ -n $line ]]; do
    line="${line#"${line%%[![:space:]]*}"}"
    if [[ $line == "$key="* ]]; then value="${line#*=}"; fi
  done <"$file"
  value="${value%"${value##*[![:space:]]}"}"
  if [[ $value == \"*\" || $value == \'*\' ]]; then value="${value:1:${#value}-2}"; fi
  printf '%s' "$value"
}

# Runs a command as the service user (as the current user in --root mode).
as_service_user() {
  if [[ $ROOT_MODE -eq 1 ]]; then
    "$@"
  elif command -v runuser >/dev/null 2>&1; then
    runuser -u "$SERVICE_USER" -- "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -u "$SERVICE_USER" -- "$@"
  else
    local quoted
    printf -v quoted '%q ' "$@"
    su -s /bin/sh "$SERVICE_USER" -c "$quoted"
  fi
}

# GET url: succeeds when the answer is a 2xx; prints the body.
http_get() {
  local url="$1"
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 2 "$url" 2>/dev/null
  elif command -v wget >/dev/null 2>&1; then
    wget -q -T 2 -O - "$url" 2>/dev/null
  else
    # bash's /dev/tcp, for minimal hosts: http://HOST:PORT/PATH only.
    (
      rest="${url#http://}"
      hostport="${rest%%/*}"
      path="/${rest#*/}"
      host="${hostport%:*}"
      host="${host#[}"
      host="${host%]}"
      exec 3<>"/dev/tcp/$host/${hostport##*:}"
      printf 'GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$hostport" >&3
      reply="$(timeout 2 cat <&3 || true)"
      [[ $reply =~ ^HTTP/1\.[01]\ 2[0-9][0-9] ]] || exit 1
      printf '%s' "${reply#*$'\r\n\r\n'}"
    ) 2>/dev/null
  fi
}

systemctl_or_say() {
  if [[ $ROOT_MODE -eq 1 ]]; then
    say "would run: systemctl $*"
  else
    systemctl "$@"
  fi
}

# --- uninstall ---------------------------------------------------------------------------------

# --purge deletes the data and its backups for good: it says what, and goes on only when told to,
# by --yes or by typing yes at a terminal. Nothing at all is removed before that.
confirm_purge() {
  local backups=0 size answer=""
  [[ -e $R_DATA || -e $R_CONF ]] || return 0
  if [[ -d $R_DATA/backups ]]; then backups="$(find "$R_DATA/backups" -maxdepth 1 -type f | wc -l)"; fi
  size="$(du -sh -- "$R_DATA" 2>/dev/null | cut -f1)" || size=""
  say "--purge deletes for good: $R_DATA${size:+ ($size)}, the database with its $backups backup file(s) in $R_DATA/backups; $R_CONF, the settings; and the user $SERVICE_USER"
  if [[ -n $(env_value DATABASE_URL "$R_ENV")$(env_value DATABASE_URL_FILE "$R_ENV") ]]; then
    say "(a PostgreSQL database named in $ENV_FILE is left as it is: drop it yourself if you mean to)"
  fi
  [[ $YES -eq 0 ]] || return 0
  [[ -t 0 ]] || die "nothing was removed: --purge asks before deleting, and there is no terminal to ask at; add --yes to confirm"
  read -r -p "$PROG: type yes to delete them: " answer || true
  [[ $answer == yes ]] || die "nothing was removed (the answer was '$answer', not yes)"
}

uninstall() {
  if [[ $PURGE -eq 1 ]]; then confirm_purge; fi
  if [[ $ROOT_MODE -eq 1 ]]; then
    say "staging root $ROOT: removing files only"
    say "would run: systemctl disable --now $SERVICE"
  elif systemctl cat "$SERVICE.service" >/dev/null 2>&1 || [[ -e $UNIT_PATH ]]; then
    say "stopping and disabling $SERVICE"
    systemctl disable --now "$SERVICE.service" >/dev/null 2>&1 || systemctl stop "$SERVICE.service" >/dev/null 2>&1 || true
  fi

  if [[ -e $R_UNIT ]]; then
    rm -f -- "$R_UNIT"
    say "removed $R_UNIT"
  else
    say "no unit at $R_UNIT"
  fi
  if [[ $PURGE -eq 1 && -d $R_DROPIN ]]; then
    rm -rf -- "$R_DROPIN"
    say "removed $R_DROPIN"
  fi
  systemctl_or_say daemon-reload
  if [[ $ROOT_MODE -eq 0 ]]; then systemctl reset-failed "$SERVICE.service" >/dev/null 2>&1 || true; fi

  if [[ -e $R_BIN ]]; then
    rm -f -- "$R_BIN"
    say "removed $R_BIN"
  else
    say "no binary at $R_BIN"
  fi

  if [[ $PURGE -eq 0 ]]; then
    say "kept the data in $R_DATA and the settings in $R_CONF${ROOT:+ (staged)}; delete them with --uninstall --purge"
    if [[ -d $R_DROPIN ]]; then say "kept local unit changes in $R_DROPIN"; fi
    say "uninstalled"
    return 0
  fi

  local dir
  for dir in "$R_DATA" "$R_CONF"; do
    if [[ -e $dir ]]; then
      rm -rf -- "$dir"
      say "deleted $dir"
    fi
  done
  if [[ $ROOT_MODE -eq 1 ]]; then
    say "would run: userdel $SERVICE_USER"
  else
    if user_exists; then
      userdel "$SERVICE_USER"
      say "deleted user $SERVICE_USER"
    fi
    if group_exists; then
      groupdel "$SERVICE_GROUP" 2>/dev/null || true
    fi
  fi
  say "uninstalled and purged"
}

if [[ $UNINSTALL -eq 1 ]]; then
  uninstall
  exit 0
fi

# --- install -----------------------------------------------------------------------------------

if [[ $ROOT_MODE -eq 1 ]]; then say "staging into $ROOT (files only: no users, no systemctl)"; fi

# 1. The new binary: downloaded, given, or built from this checkout.
SOURCE_BIN=""
if [[ $BINARY =~ ^https?:// ]]; then
  command -v curl >/dev/null 2>&1 || die "curl is needed to download $BINARY"
  work_dir
  SOURCE_BIN="$WORK_DIR/signalboard"
  say "downloading $BINARY"
  curl -fsSL --retry 2 -o "$SOURCE_BIN" -- "$BINARY" || die "could not download $BINARY"
  chmod 0755 "$SOURCE_BIN"
elif [[ -n $BINARY ]]; then
  [[ -f $BINARY ]] || die "no such file: $BINARY"
  SOURCE_BIN="$BINARY"
  if [[ ! -x $SOURCE_BIN ]]; then
    # Copy it aside to make it executable, without changing the operator's file.
    work_dir
    cp -- "$BINARY" "$WORK_DIR/signalboard"
    chmod 0755 "$WORK_DIR/signalboard"
    SOURCE_BIN="$WORK_DIR/signalboard"
  fi
elif [[ -f $SCRIPT_DIR/package.json ]] && grep -Eq '"name"[[:space:]]*:[[:space:]]*"signalboard"' "$SCRIPT_DIR/package.json"; then
  command -v npm >/dev/null 2>&1 || die "npm not found: install Node.js 18+ to build from this checkout, or pass --binary PATH|URL"
  say "building from the checkout in $SCRIPT_DIR (npm install && npm run build)"
  (cd -- "$SCRIPT_DIR" && npm install && npm run build) || die "the build failed"
  SOURCE_BIN="$SCRIPT_DIR/dist/signalboard"
  [[ -x $SOURCE_BIN ]] || die "the build did not produce $SOURCE_BIN"
else
  usage_error "no binary to install: pass --binary PATH|URL, or run install.sh from a Signalboard checkout"
fi

NEW_VERSION="$("$SOURCE_BIN" version 2>/dev/null)" || die "$SOURCE_BIN does not run here ('signalboard version' failed): wrong architecture or a broken download?"
NEW_VERSION="${NEW_VERSION//[[:space:]]/}"
[[ -n $NEW_VERSION ]] || die "$SOURCE_BIN printed no version: is it a Signalboard binary?"
say "new binary: signalboard $NEW_VERSION"

# 2. The user, the group and the directories.
if [[ $ROOT_MODE -eq 1 ]]; then
  if ! user_exists; then say "would create system user and group $SERVICE_USER (home $DATA_DIR, no login shell)"; fi
else
  if ! group_exists; then
    groupadd --system "$SERVICE_GROUP"
    say "created group $SERVICE_GROUP"
  fi
  if ! user_exists; then
    command -v useradd >/dev/null 2>&1 || die "useradd not found: create a system user '$SERVICE_USER' yourself, then re-run"
    nologin=""
    for candidate in /usr/sbin/nologin /sbin/nologin /usr/bin/nologin /bin/false; do
      if [[ -x $candidate ]]; then
        nologin="$candidate"
        break
      fi
    done
    useradd --system --gid "$SERVICE_GROUP" --home-dir "$DATA_DIR" --no-create-home \
      --shell "${nologin:-/bin/false}" --comment "Signalboard" "$SERVICE_USER"
    say "created system user $SERVICE_USER"
  fi
fi

mkdir -p -- "$R_DATA" "$R_CONF" "$(dirname -- "$R_BIN")" "$(dirname -- "$R_UNIT")"
chmod 0750 "$R_DATA" "$R_CONF"
chown_if_possible "$SERVICE_USER" "$SERVICE_GROUP" "$R_DATA"
chown_if_possible root "$SERVICE_GROUP" "$R_CONF"
# Database files created by a management command run as root would lock the service out.
for f in "$R_DATA/signalboard.db" "$R_DATA/signalboard.db-wal" "$R_DATA/signalboard.db-shm"; do
  if [[ -e $f ]]; then chown_if_possible "$SERVICE_USER" "$SERVICE_GROUP" "$f"; fi
done

# 3. The settings file: written once, then it belongs to the operator.
if [[ -e $R_ENV ]]; then
  say "kept the existing settings in $R_ENV (not overwritten)"
  PORT="$(env_value PORT "$R_ENV")"
  PORT="${PORT:-$DEFAULT_PORT}"
  if [[ -n $PORT_OPT && $PORT_OPT != "$PORT" ]]; then
    warn "--port $PORT_OPT ignored: $ENV_FILE says PORT=$PORT (edit it to change the port, then re-run)"
  fi
  BASE_URL="$(env_value BASE_URL "$R_ENV")"
  if [[ -n $BASE_URL_OPT && $BASE_URL_OPT != "$BASE_URL" ]]; then
    warn "--base-url $BASE_URL_OPT ignored: $ENV_FILE says BASE_URL=$BASE_URL (edit it to change it)"
  fi
  BASE_URL="${BASE_URL:-http://localhost:$PORT}"
  HOST="$(env_value HOST "$R_ENV")"
  ACTUAL_DATA_DIR="$(env_value DATA_DIR "$R_ENV")"
  ACTUAL_DATA_DIR="${ACTUAL_DATA_DIR:-$DATA_DIR}"
else
  PORT="${PORT_OPT:-$DEFAULT_PORT}"
  if [[ -n $BASE_URL_OPT ]]; then
    BASE_URL="$BASE_URL_OPT"
  else
    BASE_URL="http://$(hostname -f 2>/dev/null || hostname 2>/dev/null || uname -n):$PORT"
  fi
  HOST="0.0.0.0"
  ACTUAL_DATA_DIR="$DATA_DIR"
  write_atomic "$R_ENV" 0640 root "$SERVICE_GROUP" <<EOF
# Signalboard settings, read by $SERVICE.service (EnvironmentFile=$ENV_FILE).
# Written once by install.sh: re-running the installer never overwrites this file.
# After a change: systemctl restart $SERVICE
# Every setting and its meaning: signalboard --help (docs/configuration.md).
# A secret can come from a file instead: NAME_FILE=/path rather than NAME=value.

PORT=$PORT
HOST=$HOST
DATA_DIR=$DATA_DIR
BASE_URL=$BASE_URL

# A PORT below 1024 needs CAP_NET_BIND_SERVICE: re-run install.sh after changing it.
# Another DATA_DIR needs ReadWritePaths= in a drop-in (systemctl edit $SERVICE).

# Behind a reverse proxy on this host: believe its X-Forwarded-For (client IPs, rate limits).
# SIGNALBOARD_TRUST_PROXY=127.0.0.1

# Several instances on one PostgreSQL database instead of SQLite in DATA_DIR (docs/scale-out.md);
# the URL's password is best kept in a file only the service can read. Management commands
# (sudo -u $SERVICE_USER signalboard token create ...) read this file too, so they use the same database.
# DATABASE_URL_FILE=$CONF_DIR/database-url

# Integrations and push go to the internet and the LAN, never to this host or a link-local address
# unless listed here (docs/configuration.md, Outbound requests): an ntfy, a Gotify or a mail relay
# on this host needs SIGNALBOARD_OUTBOUND_ALLOW=127.0.0.1 (or localhost); deny keeps them off the LAN.
# SIGNALBOARD_OUTBOUND_ALLOW=127.0.0.1
# SIGNALBOARD_OUTBOUND_PRIVATE=allow

# SIGNALBOARD_DEFAULT_PROJECT=default
# SIGNALBOARD_BODY_LIMIT=64KiB
# SIGNALBOARD_SQLITE_SYNC=full
# SIGNALBOARD_RATE_LIMIT_FULL=0   (off; 1000/s would limit each full-access token)
# SIGNALBOARD_RATE_LIMIT_PUBLIC=60/m
# SIGNALBOARD_RATE_LIMIT_IP=120/m
# SIGNALBOARD_RATE_LIMIT_LOGIN=10/m
# SIGNALBOARD_SESSION_TTL=30d
# SIGNALBOARD_VAPID_SUBJECT=mailto:you@example.com
# SIGNALBOARD_NOTIFY_RETRY_BASE=5s
# SIGNALBOARD_NOTIFY_ATTEMPTS=8
# SIGNALBOARD_PUSH_MAX_AGE=60d
# SIGNALBOARD_WRITER=inline
# SIGNALBOARD_LIVE_INTERVAL=250ms
# SIGNALBOARD_METRICS=false
# SIGNALBOARD_LOG_LEVEL=info
EOF
  say "wrote $R_ENV (PORT=$PORT, BASE_URL=$BASE_URL)"
  # A staged file goes into an image that runs elsewhere: what it took from this host, and what it
  # leaves open, is said now rather than found out later.
  if [[ $ROOT_MODE -eq 1 ]]; then
    if [[ -z $BASE_URL_OPT ]]; then
      warn "BASE_URL=$BASE_URL names this build host, not the machine the image will run on: links, cookies and notifications use it. Pass --base-url, or set BASE_URL in $ENV_FILE (or the image's environment)"
    fi
    warn "HOST=$HOST: the server answers plain HTTP on every interface of the machine it runs on. Put it behind a proxy that does TLS (HOST=127.0.0.1 when the proxy is on that machine), or firewall the port"
  fi
fi
if ! [[ $PORT =~ ^[0-9]{1,5}$ ]] || ((10#$PORT < 1 || 10#$PORT > 65535)); then
  die "$ENV_FILE has PORT=$PORT: use a number from 1 to 65535"
fi
PORT=$((10#$PORT))
R_ACTUAL_DATA="$ROOT$ACTUAL_DATA_DIR"

# 4. Upgrade: back up the database before anything changes: on SQLite with the OLD binary, on
#    PostgreSQL with pg_dump. Without a backup nothing is changed, unless --no-backup says so.
OLD_VERSION=""
if [[ -e $R_BIN ]]; then
  OLD_VERSION="$("$R_BIN" version 2>/dev/null)" || OLD_VERSION="unknown"
  OLD_VERSION="${OLD_VERSION//[[:space:]]/}"
  OLD_VERSION="${OLD_VERSION:-unknown}"
fi
DB_URL="$(env_value DATABASE_URL "$R_ENV")"
DB_URL_FILE="$(env_value DATABASE_URL_FILE "$R_ENV")"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
backup_dir="$R_ACTUAL_DATA/backups"

make_backup_dir() {
  mkdir -p -- "$backup_dir"
  chmod 0750 "$backup_dir"
  chown_if_possible "$SERVICE_USER" "$SERVICE_GROUP" "$backup_dir"
}

# The PostgreSQL URL the service uses: DATABASE_URL, or the file DATABASE_URL_FILE names.
postgres_url() {
  if [[ -n $DB_URL ]]; then
    printf '%s' "$DB_URL"
  else
    [[ -r $ROOT$DB_URL_FILE ]] || die "$ENV_FILE names DATABASE_URL_FILE=$DB_URL_FILE, which cannot be read: fix it, or back the database up yourself and re-run with --no-backup"
    tr -d '[:space:]' <"$ROOT$DB_URL_FILE"
  fi
}

# pg_dump in its custom format, with the password (if the URL has one) in PGPASSWORD rather than
# on the command line, where every user of the host could read it. It runs as the installer's user
# (the environment reaches it whole), and the file is then given to the service's user.
backup_postgres() {
  local url password="" backup_file
  url="$(postgres_url)"
  command -v pg_dump >/dev/null 2>&1 ||
    die "the service uses PostgreSQL, and pg_dump is not installed here to back it up before the upgrade: install PostgreSQL's client programs (Debian, Ubuntu: apt-get install postgresql-client; Fedora, RHEL: dnf install postgresql), or back the database up yourself (pg_dump, your provider's snapshots) and re-run with --no-backup. Nothing was changed."
  if [[ $url =~ ^(postgres(ql)?://[^:/@]+):([^@]*)@(.*)$ ]]; then
    password="${BASH_REMATCH[3]}"
    url="${BASH_REMATCH[1]}@${BASH_REMATCH[4]}"
    password="$(printf '%b' "${password//%/\\x}")" # percent-decoding
  fi
  backup_file="$backup_dir/pre-upgrade-$OLD_VERSION-$stamp.dump"
  make_backup_dir
  say "backing up the PostgreSQL database with pg_dump ($(pg_dump --version 2>/dev/null | head -n 1))"
  (umask 0027 && cd -- "$backup_dir" && PGPASSWORD="$password" PGCONNECT_TIMEOUT=10 pg_dump --no-password --format=custom --file="$backup_file" --dbname="$url") ||
    die "the pre-upgrade backup (pg_dump) failed: nothing was changed. Fix what it said, or back the database up yourself and re-run with --no-backup"
  [[ -s $backup_file ]] || die "the pre-upgrade backup $backup_file is missing or empty: nothing was changed"
  chown_if_possible "$SERVICE_USER" "$SERVICE_GROUP" "$backup_file"
  say "backup: $backup_file (restore with: pg_restore --clean --dbname=DATABASE_URL $backup_file)"
}

backup_sqlite() {
  local backup_file="$backup_dir/pre-upgrade-$OLD_VERSION-$stamp.db"
  [[ $OLD_VERSION != unknown ]] ||
    die "the installed $BIN_PATH does not run, so it cannot take the pre-upgrade backup; back up $ACTUAL_DATA_DIR yourself, then re-run with --no-backup"
  make_backup_dir
  say "backing up the database with the installed signalboard $OLD_VERSION"
  (umask 0027 && cd -- "$R_ACTUAL_DATA" && as_service_user "$R_BIN" backup "$backup_file" --data-dir "$R_ACTUAL_DATA") >/dev/null ||
    die "the pre-upgrade backup failed: nothing was changed"
  [[ -s $backup_file ]] || die "the pre-upgrade backup $backup_file is missing or empty: nothing was changed"
  say "backup: $backup_file"
}

if [[ -n $OLD_VERSION ]]; then
  if [[ -n $DB_URL || -n $DB_URL_FILE ]]; then
    if [[ $NO_BACKUP -eq 1 ]]; then warn "not backing up the PostgreSQL database first (--no-backup)"; else backup_postgres; fi
  elif [[ -f $R_ACTUAL_DATA/signalboard.db ]]; then
    if [[ $NO_BACKUP -eq 1 ]]; then warn "not backing up $ACTUAL_DATA_DIR/signalboard.db first (--no-backup)"; else backup_sqlite; fi
  fi
fi

# 5. The binary, atomically (a running service keeps its old inode until restarted).
bin_tmp="$(mktemp "$(dirname -- "$R_BIN")/.signalboard.XXXXXX")"
TEMP_FILES+=("$bin_tmp")
cp -- "$SOURCE_BIN" "$bin_tmp"
chmod 0755 "$bin_tmp"
chown_if_possible root root "$bin_tmp"
mv -f -- "$bin_tmp" "$R_BIN"
if [[ -n $OLD_VERSION ]]; then
  say "installed $R_BIN: signalboard $OLD_VERSION -> $NEW_VERSION"
else
  say "installed $R_BIN: signalboard $NEW_VERSION"
fi

# 6. The unit: ours, rewritten every time.
if ((PORT < 1024)); then
  CAPS=$'AmbientCapabilities=CAP_NET_BIND_SERVICE\nCapabilityBoundingSet=CAP_NET_BIND_SERVICE'
else
  CAPS="CapabilityBoundingSet="
fi
write_atomic "$R_UNIT" 0644 root root <<EOF
# Written by Signalboard's install.sh and rewritten on every run: do not edit this file.
# Local changes belong in a drop-in: systemctl edit $SERVICE
# Settings live in $ENV_FILE.
[Unit]
Description=Signalboard event and metric tracker
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=$SERVICE_USER
Group=$SERVICE_GROUP
EnvironmentFile=$ENV_FILE
ExecStart=$BIN_PATH serve
WorkingDirectory=$DATA_DIR
Restart=on-failure
RestartSec=2
KillSignal=SIGTERM
TimeoutStopSec=10
UMask=0027
LimitNOFILE=65536

# Hardening. MemoryDenyWriteExecute is left out on purpose: it kills Bun's JIT runtime.
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths=$DATA_DIR
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
SystemCallArchitectures=native
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
$CAPS

[Install]
WantedBy=multi-user.target
EOF
say "wrote $R_UNIT"

# 7. systemd.
if [[ $ROOT_MODE -eq 1 ]]; then
  say "would run: systemctl daemon-reload"
  say "would run: systemctl enable $SERVICE (in an image: systemctl --root=$ROOT enable $SERVICE)"
  if [[ $NO_START -eq 0 ]]; then say "would run: systemctl restart $SERVICE"; fi
  say "staged signalboard $NEW_VERSION in $ROOT"
  exit 0
fi

systemctl daemon-reload
systemctl enable --quiet "$SERVICE.service"
say "enabled $SERVICE (starts at boot)"

if [[ $NO_START -eq 1 ]]; then
  if systemctl is-active --quiet "$SERVICE.service"; then
    say "not restarted (--no-start): the running service keeps the old binary until: systemctl restart $SERVICE"
  else
    say "not started (--no-start): start it with: systemctl start $SERVICE"
  fi
  exit 0
fi

started_at="$(date '+%Y-%m-%d %H:%M:%S')"
say "restarting $SERVICE"
systemctl restart "$SERVICE.service"

case "$HOST" in
  "" | 0.0.0.0 | :: | "[::]") probe_host="127.0.0.1" ;;
  *:*) probe_host="[${HOST#[}" && probe_host="${probe_host%]}]" ;;
  *) probe_host="$HOST" ;;
esac
health_url="http://$probe_host:$PORT/healthz"
healthy=0
health=""
for ((i = 0; i < HEALTH_TIMEOUT * 2; i++)); do
  if health="$(http_get "$health_url")" && [[ $health == *'"status":"ok"'* ]]; then
    healthy=1
    break
  fi
  sleep 0.5
done

if [[ $healthy -eq 0 ]]; then
  printf '%s: error: %s did not answer within %s s\n' "$PROG" "$health_url" "$HEALTH_TIMEOUT" >&2
  systemctl status "$SERVICE.service" --no-pager --lines=0 >&2 || true
  printf '%s: last log lines:\n' "$PROG" >&2
  journalctl -u "$SERVICE.service" -n 30 --no-pager -o cat >&2 || true
  die "the service did not come up; fix the cause above (settings: $ENV_FILE), then re-run or: systemctl restart $SERVICE"
fi
if [[ $health != *"\"version\":\"$NEW_VERSION\""* ]]; then
  warn "$health_url answered, but not with version $NEW_VERSION: is something else listening on port $PORT?"
fi
say "signalboard $NEW_VERSION is running: $health_url answers"

# The one-time set-up link, when the instance has no owner yet. The journal may lag a moment.
setup_link=""
for ((i = 0; i < 6; i++)); do
  setup_link="$(journalctl -u "$SERVICE.service" --since "$started_at" --no-pager -o cat 2>/dev/null |
    grep -Eo 'https?://[^[:space:]"]*/setup\?code=[A-Za-z0-9_-]+' | tail -n 1 || true)"
  [[ -z $setup_link ]] || break
  sleep 0.5
done

echo
if [[ -n $setup_link ]]; then
  cat <<EOF
Signalboard is running, and has no owner account yet. Next steps:

  1. Open this one-time link and create the owner account:

       $setup_link

     (It uses BASE_URL=$BASE_URL; until your proxy or DNS is in place, open it through an
     SSH tunnel: ssh -L $PORT:127.0.0.1:$PORT this-server, then http://localhost:$PORT/setup?code=...)

  2. Or create the owner from the shell (prints a generated password):

       sudo -u $SERVICE_USER $BIN_PATH user create NAME

Settings: $ENV_FILE (then: systemctl restart $SERVICE)
Logs:     journalctl -u $SERVICE -f
EOF
else
  cat <<EOF
Signalboard is running at $BASE_URL (locally: http://$probe_host:$PORT).

No set-up link in this start's log: the instance already has an owner account (or
SIGNALBOARD_LOG_LEVEL hides it). To add a user (the first one becomes the owner):

  sudo -u $SERVICE_USER $BIN_PATH user create NAME

Settings: $ENV_FILE (then: systemctl restart $SERVICE)
Logs:     journalctl -u $SERVICE -f
EOF
fi
