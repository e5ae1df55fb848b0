#!/usr/bin/env bash
# pull_hostile.sh - `tailtriage pull --jaeger` and `--tempo` against a
# broken or hostile back end (tests/py/canned_http.py gives fixed answers on
# 127.0.0.1): every answer is untrusted. Checks: service names and a
# Content-Type with terminal escapes never reach stderr as escapes; an
# error's body is quoted in the message; times at the ends of int64 and
# lengths that do not fit are refused without undefined behaviour (the
# sanitized build aborts on it); an answer holding another trace than the
# one asked for stores nothing. Each pull exits non-zero with a clear
# message and no crash.
set -u
BIN="${TT_BIN:?}"
SRV="${TT_SRC:?}/tests/py/canned_http.py"
TMP="$(mktemp -d)"
SRV_PID=""
cleanup() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

W=2026-01-01T00:00:00Z..2026-01-01T00:00:10Z
T0=1767225600000000000 # the window's start in ns
ESC=$'\x1b' BEL=$'\x07'

# serve CASE: starts canned_http.py with the answers of CASE (routes.py
# below), sets URL
serve() {
  [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
  python3 "$TMP/routes.py" "$1" "$T0" >"$TMP/routes.json" || fail "routes of $1"
  rm -f "$TMP/port"
  python3 "$SRV" --routes "$TMP/routes.json" --port-file "$TMP/port" --lifetime 120 &
  SRV_PID=$!
  for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.05; done
  [ -s "$TMP/port" ] || fail "canned_http.py did not start"
  URL="http://127.0.0.1:$(cat "$TMP/port")"
}

# pull NAME BACKEND [options]: runs the pull, which must fail cleanly
pull() {
  local name=$1 be=$2
  shift 2
  rm -f "$TMP/$name.db"
  "$BIN" pull --db "$TMP/$name.db" "$be" "$URL" --service shop --window "$W" --retries 0 \
    --timeout 20s "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
  local rc=$?
  [ $rc -eq 1 ] || fail "$name: exit $rc, expected 1: $(cat "$TMP/$name.err")"
  grep -q "runtime error\|AddressSanitizer\|LeakSanitizer" "$TMP/$name.err" &&
    fail "$name: sanitizer report: $(cat "$TMP/$name.err")"
  if grep -q "[$ESC$BEL]" "$TMP/$name.out" "$TMP/$name.err"; then
    fail "$name: a control character from the server reached the terminal: $(cat -v "$TMP/$name.err")"
  fi
  return 0
}

TA=0af7651916cd43dd8448eb211c80319c TB=5b8efff798038103d269b633813fc60c
cat >"$TMP/routes.py" <<'PY'
import json, sys
case, t0 = sys.argv[1], int(sys.argv[2])
TA, TB = "0af7651916cd43dd8448eb211c80319c", "5b8efff798038103d269b633813fc60c"
J = lambda o: json.dumps(o)
services = {"path": "/api/v3/services", "body": J({"services": ["shop"]})}
if case == "names":
    # escape sequences (an OSC title, a CSI colour) in the names of services
    r = [{"path": "/api/v3/services",
          "body": J({"services": ["shop2", "\x1b]0;owned\x07evil\x1b[31m"]})},
         {"path": "/api/v3/trace-summaries", "status": 404,
          "body": J({"error": {"httpCode": 404, "message": "No traces found"}})}]
elif case == "error":
    r = [services,
         {"path": "/api/v3/trace-summaries", "status": 500,
          "headers": [["Content-Type", "text/plain\x1b[2J"]],
          "body": "backend exploded: store unavailable"}]
elif case == "extremes":
    I64 = 9223372036854775807
    r = [services,
         {"path": "/api/v3/trace-summaries", "body": J({"summaries": [
             {"traceId": TA, "minStartTimeUnixNano": str(-I64 - 1), "maxEndTimeUnixNano": str(I64)},
             {"traceId": "1" + TA[1:], "minStartTimeUnixNano": str(t0), "maxEndTimeUnixNano": str(I64)},
             {"traceId": "2" + TA[1:], "minStartTimeUnixNano": 1e300, "maxEndTimeUnixNano": -1e300}]})}]
elif case == "tempo":
    # a full page every time, each trace as long as int64 allows
    tr = lambda i: {"traceID": "%x" % (i + 10) + TA[2:], "startTimeUnixNano": str(t0 + i * 10**9),
                    "durationMs": 1e300, "spanSets": [{"spans": [
                        {"startTimeUnixNano": str(t0 + i * 10**9),
                         "durationNanos": "9223372036854775807"}]}]}
    r = [{"path": "/api/search", "body": J({"traces": [tr(1), tr(2)]})}]
elif case == "other":
    span = {"traceId": TB, "spanId": "eee19b7ec3c1b174", "name": "GET /cart", "kind": 2,
            "startTimeUnixNano": str(t0 + 10**9), "endTimeUnixNano": str(t0 + 13 * 10**8)}
    otlp = {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "shop"}}]},
        "scopeSpans": [{"spans": [span]}]}]}
    r = [services,
         {"path": "/api/v3/trace-summaries", "body": J({"summaries": [
             {"traceId": TA, "minStartTimeUnixNano": str(t0 + 10**9),
              "maxEndTimeUnixNano": str(t0 + 13 * 10**8)}]})},
         {"path": "/api/v3/traces/" + TA, "body": J({"result": otlp})}]
print(J(r))
PY

# 1. the "services seen" of an empty search, with escapes in their names
serve names
pull names --jaeger
grep -q "no trace of shop" "$TMP/names.err" || fail "names: $(cat "$TMP/names.err")"
grep -q "services seen: shop2, .*evil" "$TMP/names.err" ||
  fail "names: the names are not listed: $(cat -v "$TMP/names.err")"

# 2. a search answered 500 with an escape in its Content-Type: the body is
# quoted (it says what broke), the type without its escape
serve error
pull error --jaeger
grep -q "HTTP 500 text/plain.*: backend exploded: store unavailable" "$TMP/error.err" ||
  fail "error: the body is not in the message: $(cat -v "$TMP/error.err")"

# 3. times at the ends of int64, and beyond, in Jaeger's summaries: no
# overflow; the trace whose extent does not fit is listed with no length
# and its fetch (404 here) fails
serve extremes
pull extremes --jaeger --slowest 1 --sample 5
grep -q "could not be stored" "$TMP/extremes.err" || fail "extremes: $(cat "$TMP/extremes.err")"

# 4. Tempo listing a full page every time, each trace as long as int64
# allows: the slowest set's threshold never passes the end of int64
serve tempo
pull tempo --tempo --page 2 --slowest 1 --sample 2
grep -q "could not be stored" "$TMP/tempo.err" || fail "tempo: $(cat "$TMP/tempo.err")"

# 5. the trace asked for answered with another one: nothing stored
serve other
pull other --jaeger --slowest 1 --sample 1
grep -q "holds trace $TB, not the one asked for" "$TMP/other.err" || fail "other: $(cat "$TMP/other.err")"
n=$(sqlite3 "$TMP/other.db" "SELECT count(*) FROM spans")
[ "$n" = 0 ] || fail "other: $n spans of the other trace were stored"

echo "pull_hostile: ok"
