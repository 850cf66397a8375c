#!/usr/bin/env bash
# Runs the Python client's tests against a real docindex server: starts `docindex serve` (the
# build must exist: npm run build) embedded on a fresh DATA_DIR on 127.0.0.1, creates a second
# organisation with a tiny rate limit for the 429 test, runs
# `python3 -m unittest discover -s clients/python -v` with DOCINDEX_URL and DOCINDEX_API_KEY
# pointing at it, and stops the server. Fails if python3 (3.9 or newer) is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v python3 >/dev/null 2>&1; then
  echo "python3 is required for the Python client's tests" >&2
  exit 1
fi
if ! python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)'; then
  echo "the Python client needs Python 3.9 or newer; python3 is $(python3 --version 2>&1)" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/docindex-python-XXXXXX")
server_pid=
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap stop_server EXIT

# Always embedded on its own data: drop what would point it at CI's PostgreSQL and Redis.
# URL_FETCH_ALLOW admits 127.0.0.3 only (the site the sources test serves), so 127.0.0.1 stays
# refused as any loopback address is by default. `env`
# execs node, so the pid below is the server's own (a shell function would leave it orphaned).
docindex=(env -u DATABASE_URL -u REDIS_URL -u BLOB_DIR -u DATABASE_SCHEMA -u REDIS_PREFIX
  DATA_DIR="$work/data" LOG_LEVEL=warn HOST=127.0.0.1 PORT=0 URL_FETCH_ALLOW=127.0.0.3 node bin/docindex.js)

"${docindex[@]}" serve >"$work/stdout" 2>"$work/stderr" &
server_pid=$!

url=
for _ in $(seq 1 120); do
  url=$(sed -n 's/^docindex listening on \(http:[^ ]*\).*/\1/p' "$work/stdout")
  [ -n "$url" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  sleep 0.25
done
if [ -z "$url" ]; then
  echo "docindex serve did not start:" >&2
  cat "$work/stdout" >&2
  tail -n 40 "$work/stderr" >&2
  exit 1
fi
key=$(sed -n 's/^ *api_key: \(dix_[^ ]*\).*/\1/p' "$work/stdout")
if [ -z "$key" ]; then
  echo "docindex serve printed no first API key:" >&2
  cat "$work/stdout" >&2
  exit 1
fi
limited=$("${docindex[@]}" orgs create --name python-client-rate-limited --rate-limit-rpm 3 --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["api_key"])')

echo "docindex at $url (data in $work)"
export DOCINDEX_URL=$url DOCINDEX_API_KEY=$key DOCINDEX_RATE_LIMITED_API_KEY=$limited
# The live tests fail instead of skipping when the server is missing.
export REQUIRE_PYTHON_CLIENT_TESTS=1
status=0
python3 -m unittest discover -s clients/python -v || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- docindex server log (last 40 lines)" >&2
  tail -n 40 "$work/stderr" >&2
fi
exit "$status"
