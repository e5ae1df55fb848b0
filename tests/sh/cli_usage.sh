#!/usr/bin/env bash
# cli_usage.sh - what a new user gets for a mistyped argument: a usage error
# (exit 2) naming the choices, before any file is read; a folder where a
# file belongs is called a directory; `pull` against a server that is down
# says so once per round with RFC 3339 times; `serve` listening beyond
# loopback without a token warns. Exit status: 0 ok, 1 failure, 2 usage.
set -euo pipefail
: "${TT_BIN:?TT_BIN must point at the tailtriage binary}"
: "${TT_BUILD:?TT_BUILD must point at the build directory}"
TT_SRC=${TT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tt-cli-usage.XXXXXX")
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$TMP/err" ] && cat "$TMP/err" >&2; exit 1; }
"$TT_BUILD/tests/test_tui" --make-db "$TMP/f.db"
"$TT_BUILD/tests/test_tui" --model "$TMP/model.json"
DB="$TMP/f.db"

# expect STATUS PATTERN CMD...: runs tailtriage CMD, checks the exit status
# and that stderr matches the extended regular expression PATTERN.
expect() {
  local want=$1 pat=$2 rc=0
  shift 2
  "$TT_BIN" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
  [ "$rc" = "$want" ] || fail "tailtriage $*: exit status $rc, expected $want"
  grep -Eq -- "$pat" "$TMP/err" || fail "tailtriage $*: stderr does not match /$pat/"
}

# ---- unknown workload class, in every command that takes --class ----------
known="unknown class 'gold' \(known: enterprise, premium, standard\)"
expect 2 "$known" report --db "$DB" --class gold
expect 2 "$known" report --db "$DB" --model "$TMP/model.json" --class gold --format json
expect 2 "$known" check client-vs-server --db "$DB" --node pricing --class gold
expect 2 "$known" check host-concentration --db "$DB" --class gold
expect 2 "$known" tui --db "$DB" --class gold
[ -s "$TMP/out" ] && fail "an unknown class still printed a report"
"$TT_BIN" report --db "$DB" --class premium >"$TMP/out" || fail "a known class is refused"
grep -q "GET /v2/home" "$TMP/out" || fail "report --class premium shows no endpoint"

# ---- --sampled that is no share: a usage error naming what it takes -------
expect 2 "--sampled: '150%': a sampled share must be above 0 and at most 100 %" \
  diagnose --db "$DB" --sampled 150%
expect 2 "--sampled: 'often' is not a share \('6%', '0.06', '1/16'\), 'tail' or 'all'" \
  report --db "$DB" --sampled often
expect 2 "--sampled: '0'" tui --db "$DB" --sampled 0

# ---- unknown --format: usage error listing the formats, nothing read ------
expect 2 "unknown format 'xml' \(known: otlp-json, jaeger-json, zipkin-json, prometheus, openmetrics, otlp-metrics, otlp-proto, otlp-proto-traces, otlp-proto-metrics, sheet\)" \
  import --db "$TMP/new.db" --format xml "$TMP/no-such-file.json"
grep -q "no-such-file" "$TMP/err" && fail "import read the file before checking --format"
[ -e "$TMP/new.db" ] && fail "import created the database before checking --format"
for cmd in report diagnose; do
  expect 2 "--format must be text or json, not 'yaml'" $cmd --db "$TMP/none.db" --format yaml
done
expect 2 "--format must be text or json, not 'yaml'" check host-concentration --db "$TMP/none.db" --format yaml

# ---- --endpoint: SERVICE ROUTE, one of the data's endpoints ----------------
expect 2 "--endpoint takes SERVICE ROUTE" report --db "$DB" --endpoint mercury-api
expect 1 "no request of endpoint 'mercury-api GET /nope' .*'mercury-api GET /v2/home'" \
  report --db "$DB" --endpoint mercury-api 'GET /nope'
expect 1 "no request of endpoint 'shop GET /x'" diagnose --db "$DB" --endpoint 'shop GET /x'
expect 2 "--endpoint asks for 'shop GET /x', but the model describes 'mercury-api GET /v2/home'" \
  report --db "$DB" --model "$TMP/model.json" --endpoint 'shop GET /x'
expect 2 "--format must be text or json, not 'yaml'" endpoints --db "$DB" --format yaml
expect 2 "unexpected argument 'extra'" endpoints --db "$DB" extra
# two words or one: the same endpoint
"$TT_BIN" report --db "$DB" --model none --endpoint mercury-api 'GET /v2/home' >"$TMP/two" ||
  fail "--endpoint SERVICE ROUTE refused"
"$TT_BIN" report --db "$DB" --model none --endpoint 'mercury-api GET /v2/home' >"$TMP/one" ||
  fail "--endpoint 'SERVICE ROUTE' refused"
cmp -s "$TMP/one" "$TMP/two" || fail "--endpoint in one word and in two differ"
grep -q "^Endpoint  mercury-api GET /v2/home" "$TMP/one" || fail "--endpoint: another endpoint analysed"

# ---- a directory where a file belongs -------------------------------------
mkdir "$TMP/dir"
expect 1 "dir: is a directory" report --db "$TMP/dir"
expect 1 "dir: is a directory" report --db "$DB" --model "$TMP/dir"
expect 1 "dir: is a directory" diagnose --sheet "$TMP/dir" --model "$TMP/model.json"
expect 1 "dir: is a directory" import --db "$TMP/i.db" "$TMP/dir"
# (an answers file that cannot be used is a usage error: docs/drills.md)
expect 2 "dir: is a directory" drill train "$TT_SRC/tests/fixtures/drills/mini.drill.json" \
  --answers "$TMP/dir" --db "$TMP/h.db"

# ---- usage errors are 2, failures 1 ---------------------------------------
expect 2 "--max-body 'lots'" serve --db "$TMP/s.db" --max-body lots
expect 2 "--max-connections '0'" serve --db "$TMP/s.db" --max-connections 0
expect 2 "--timeout 'never'" serve --db "$TMP/s.db" --timeout never
expect 2 "--every 'often'" pull --prometheus http://127.0.0.1:1 --db "$TMP/p.db" --every often
expect 2 "--timeout 'x'" pull --prometheus http://127.0.0.1:1 --db "$TMP/p.db" --timeout x
expect 2 "--range '5'" pull --prometheus http://127.0.0.1:1 --db "$TMP/p.db" --range 5
expect 2 "expected an http:// or https:// URL" pull --prometheus 127.0.0.1:9090 --db "$TMP/p.db"
expect 2 "--window" report --db "$DB" --window yesterday
expect 2 "unknown command" frobnicate

# ---- did you mean: a close command, subcommand, check or option is offered
# (one edit distance; a swap of two neighbours is one edit), before anything
# is read; nothing is offered when nothing is close
expect 2 "^tailtriage: unknown command 'reprot'; did you mean 'report'\?$" reprot
grep -q "did you mean" "$TMP/err" || fail "no suggestion"
expect 2 "unknown command 'diag'; did you mean 'diagnose'\?" diag
expect 2 "^tailtriage: unknown command 'frobnicate'$" frobnicate
grep -q "did you mean" "$TMP/err" && fail "'frobnicate' got a suggestion: $(cat "$TMP/err")"
grep -q "^  report " "$TMP/err" || fail "a command far from any other does not list the commands"
expect 2 "unknown subcommand 'trian'; did you mean 'train'\?" drill trian
expect 2 "unknown verb 'infre'; did you mean 'infer'\?" model infre
expect 2 "unknown check 'host-concentraton'; did you mean 'host-concentration'\?" \
  check host-concentraton --db "$DB"
expect 2 "^tailtriage report: unknown option '--windwo'; did you mean '--window'\?$" \
  report --db "$TMP/none.db" --windwo 1..2
grep -q "^Run 'tailtriage report --help' for its options.$" "$TMP/err" \
  || fail "an unknown option does not say where the options are"
[ -e "$TMP/none.db" ] && fail "report opened a database despite an unknown option"
# every command's options go through the same parser: each one offers
# --help for --hepl (a transposition), and --window for --windwo where it has one
for cmd in demo import report tui serve pull diagnose check "drill list" "drill train" \
  "model infer" "model check" "sim mercury"; do
  who=${cmd% mercury}  # (sim's scenario is an argument)
  # shellcheck disable=SC2086
  expect 2 "^tailtriage $who: unknown option '--hepl'; did you mean '--help'\?$" $cmd --hepl
  # shellcheck disable=SC2086
  "$TT_BIN" $cmd --help 2>/dev/null | grep -q -- "--window" || continue
  # shellcheck disable=SC2086
  expect 2 "^tailtriage $who: unknown option '--windwo'; did you mean '--window'\?$" $cmd --windwo x
done
expect 2 "^tailtriage report: unknown option '--frobnicate'$" report --frobnicate
expect 2 "option '--s' is ambiguous: it could be '--skew-tolerance', '--sample'" report --s 5
expect 2 "option '--window' needs a value" report --window
expect 2 "option '-d' needs a value" report -d
expect 2 "option '--help' takes no value" report --help=yes
expect 2 "unknown option '-z'" report -z
# a typed escape sequence comes back cleaned
expect 2 "unknown command 'rep.*ort'" "rep$(printf '\033[2J')ort"
grep -q "$(printf '\033')" "$TMP/err" && fail "an escape sequence from the command line reached the terminal"
expect 2 "unknown scenario 'nosuch'" sim nosuch --out "$TMP/simout"
expect 2 "listen address 'nonsense'" serve --db "$TMP/s.db" --listen nonsense
expect 2 "listen address 'nonsense'" tui --db "$DB" --listen nonsense
expect 2 "unknown check" check nosuch --db "$DB"

# ---- pull against a server that is down ------------------------------------
# a port that was just free: nothing listens there
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rc=0
"$TT_BIN" pull --prometheus "http://127.0.0.1:$port" --db "$TMP/p.db" \
  --model "$TMP/model.json" --once >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] || fail "pull --once against a server that is down: exit $rc"
[ "$(grep -c "127.0.0.1:$port" "$TMP/err")" = 1 ] || fail "pull printed the connection error $(grep -c "127.0.0.1:$port" "$TMP/err") times in one round"
grep -Eq "round at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z: the same error for [0-9]+ more quer" "$TMP/err" \
  || fail "pull does not say how many queries failed the same way"
grep -Eq "^round at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z: [0-9]+ queries, [0-9]+ failed" "$TMP/out" \
  || fail "the round line has no RFC 3339 time: $(cat "$TMP/out")"

# ---- serve beyond loopback without a token ---------------------------------
serve_warns() {
  rm -f "$TMP/err"  # (the old one would still say "serving" until the new one starts)
  "$TT_BIN" serve --db "$TMP/s.db" -q "$@" 2>"$TMP/err" &
  spid=$!
  for ((i = 0; i < 300; i++)); do grep -q "serving" "$TMP/err" && break; sleep 0.05; done
  grep -q "serving" "$TMP/err" || fail "serve $* did not start"
  kill -TERM "$spid"
  wait "$spid" || true
  spid=
  grep -q "warning: listening on .* without --token" "$TMP/err"
}
serve_warns --listen 0.0.0.0:0 || fail "no warning for 0.0.0.0 without --token"
serve_warns --listen 0.0.0.0:0 --token s3cret && fail "a warning although --token is given"
serve_warns --listen 127.0.0.1:0 && fail "a warning for loopback"
echo "cli_usage: ok"
