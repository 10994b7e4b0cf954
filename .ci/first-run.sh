#!/usr/bin/env bash
# A newcomer's first run, checked (docs/operations.md#one-machine-npm-start): in this (fresh) copy, `npm start` comes up on its
# embedded defaults (no DATABASE_URL, REDIS_URL or KEY_PEPPER; a free PORT, a temp DATA_DIR),
# the README's admin commands work in a second process while it runs, a second instance on the
# same data says why it cannot start, a Log4Shell triage cites CISA KEV (the shipped snapshot),
# and SIGTERM stops it cleanly (exit 0, the database record removed). Run from the repository
# root after `npm ci`, as `bash .ci/first-run.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
unset DATABASE_URL REDIS_URL KEY_PEPPER EMBEDDED_PG_PORT

tmp="$(mktemp -d)"
# As root the embedded PostgreSQL runs as the `postgres` user: it must reach the data folder.
chmod 755 "$tmp"
export DATA_DIR="$tmp/data"
PORT="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
export PORT
BASE="http://127.0.0.1:$PORT"
log="$tmp/start.log"
started=$SECONDS
npm_pid=""

fail() {
  echo "first-run: FAILED: $*" >&2
  echo "---- npm start output ----" >&2
  tail -n 40 "$log" >&2 || true
  exit 1
}
cleanup() {
  if [ -n "$npm_pid" ] && kill -0 "$npm_pid" 2>/dev/null; then
    kill -TERM -- "-$npm_pid" 2>/dev/null || true
    sleep 5
    kill -KILL -- "-$npm_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "first-run: npm start (PORT=$PORT, DATA_DIR=$DATA_DIR)"
# Its own process group, so the cleanup can stop everything it started, and nothing else.
# LOG_FORMAT=pretty: what a terminal gets (`auto` picks it on a TTY), so its request lines are checked too.
LOG_FORMAT=pretty setsid npm start >"$log" 2>&1 </dev/null &
npm_pid=$!
for _ in $(seq 1 180); do
  grep -q "is running" "$log" && break
  kill -0 "$npm_pid" 2>/dev/null || fail "npm start exited before it was up"
  sleep 1
done
grep -q "is running" "$log" || fail "npm start was not up within 180 s"
grep -q "Open $BASE/" "$log" || fail "the banner does not name $BASE"
grep -q "CISA KEV: catalog 2025.08.25 (1,404 entries" "$log" || fail "the banner does not say the shipped KEV snapshot is loaded"
grep -q "FIRST EPSS: not loaded" "$log" || fail "the banner does not say EPSS is not loaded"
[ -f "$DATA_DIR/postgres.json" ] || fail "no $DATA_DIR/postgres.json while the server runs"
server_pid="$(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')).pid)" "$DATA_DIR/postgres.json")"
echo "first-run: up after $((SECONDS - started)) s (server pid $server_pid)"

echo "first-run: npm run admin -- create-workspace (second process)"
out="$(npm run --silent admin -- create-workspace --name "First run" --plan trial 2>"$tmp/admin.err")" \
  || { cat "$tmp/admin.err" >&2; fail "create-workspace failed beside npm start"; }
key="$(printf '%s\n' "$out" | sed -n 's/^api_key //p')"
[[ "$key" =~ ^svc_[0-9A-Za-z]{38}$ ]] || fail "create-workspace printed no API key: $out"

echo "first-run: npm run admin -- enrich (second process)"
out="$(npm run --silent admin -- enrich --kev data/kev/known_exploited_vulnerabilities.json.gz 2>&1)" \
  || fail "enrich failed beside npm start: $out"
[[ "$out" == *"kev: 1404 entries (catalog 2025.08.25)"* ]] || fail "enrich said: $out"

echo "first-run: a second instance on the same data says why it cannot start"
set +e
second="$(PORT=0 timeout 60 node dist/src/main.js 2>&1)"
code=$?
set -e
[ "$code" -eq 1 ] || fail "a second instance exited $code: $second"
[[ "$second" == *"is already run by process $server_pid"* ]] || fail "a second instance said: $second"
[[ "$second" != *undefined* ]] || fail "a second instance printed undefined: $second"

echo "first-run: a Log4Shell triage with the new key cites CISA KEV"
answer="$(node -e "
  fetch(process.argv[1] + '/api/v1/triage', { method: 'POST',
    headers: { 'x-api-key': process.argv[2], 'content-type': 'application/json' },
    body: JSON.stringify({ cveIds: ['CVE-2021-44228'], title: 'Log4Shell in billing-api', severity: 'CRITICAL' }) })
  .then(async (r) => { console.log(r.status, await r.text()); })" "$BASE" "$key")"
[[ "$answer" == 200* ]] || fail "triage answered: $answer"
[[ "$answer" == *"Known Exploited Vulnerabilities catalog"* ]] || fail "triage does not cite CISA KEV: $answer"
grep -qE "INFO: POST /api/v1/triage 200 [0-9]+ ms" "$log" || fail "no short request line for the triage in the start output"

echo "first-run: SIGTERM"
kill -TERM "$server_pid"
set +e
wait "$npm_pid"
code=$?
set -e
npm_pid=""
[ "$code" -eq 0 ] || fail "npm start exited $code after SIGTERM"
[ ! -e "$DATA_DIR/postgres.json" ] || fail "postgres.json left behind after a clean shutdown"
[ ! -e "$DATA_DIR/postgres/postmaster.pid" ] || fail "the embedded PostgreSQL still runs after shutdown"
echo "first-run: OK in $((SECONDS - started)) s"
