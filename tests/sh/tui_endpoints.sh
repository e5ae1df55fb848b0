#!/usr/bin/env bash
# tui_endpoints.sh - the dashboard on a service with two endpoints
# (docs/endpoints.md), in a real terminal (tmux, 110x30). The spans are
# shaped as Node's HTTP instrumentation makes them (every server span
# "GET", the path only in url.path, with ids in it), written as OTLP JSON
# and imported; in the window the less common endpoint, the cart, got
# slower (its dependency cart-svc did). As an engineer would see it:
#  - without --endpoint the dashboard opens the endpoint that slowed, and
#    its header names it and says how many there are;
#  - e lists both endpoints with their templated routes, the open one
#    marked; Enter opens the marked one's DAG;
#  - } and { switch to the next / previous endpoint in one keystroke, and
#    the DAG and the header follow.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"

python3 - "$TUI_TMP/spans.json" <<'PY'
import json, random, sys, uuid
rnd = random.Random(7)
T0 = 1784052000 * 10**9          # 2026-07-14T18:00:00Z: the baseline
S = 10**9
spans = {"shop": [], "catalog": [], "cart-svc": []}
def hexid(n):
    return "".join(rnd.choice("0123456789abcdef") for _ in range(n))
def attr(k, v):
    return {"key": k, "value": {"stringValue": v}}
def add(svc, tid, sid, pid, name, kind, start, end, attrs):
    spans[svc].append({"traceId": tid, "spanId": sid, "parentSpanId": pid, "name": name,
                       "kind": kind, "startTimeUnixNano": str(start),
                       "endTimeUnixNano": str(end), "attributes": attrs})
for phase in (0, 1):              # baseline 18:00-18:10, window 18:10-18:20
    for i in range(600):
        t = T0 + phase * 600 * S + i * S
        tid, root, call, srv = hexid(32), hexid(16), hexid(16), hexid(16)
        cart = i % 4 == 0         # a quarter of the requests
        if cart:
            path, dep = "/api/cart/%s" % uuid.UUID(int=rnd.getrandbits(128)), "cart-svc"
            work = (40 + rnd.random() * 20) * 10**6 + (250 * 10**6 if phase else 0)
        else:
            path, dep = "/api/items/%d" % rnd.randrange(10000, 99999), "catalog"
            work = (20 + rnd.random() * 10) * 10**6
        work = int(work)
        add("shop", tid, root, "", "GET", 2, t, t + work + 4 * 10**6,
            [attr("http.request.method", "GET"), attr("url.path", path)])
        add("shop", tid, call, root, "GET", 3, t + 1 * 10**6, t + work + 3 * 10**6,
            [attr("http.request.method", "GET"), attr("server.address", dep)])
        add(dep, tid, srv, call, "GET", 2, t + 2 * 10**6, t + work + 2 * 10**6,
            [attr("http.request.method", "GET"), attr("url.path", path.replace("/api", ""))])
doc = {"resourceSpans": [{"resource": {"attributes": [attr("service.name", s)]},
                          "scopeSpans": [{"scope": {"name": "@opentelemetry/instrumentation-http"},
                                          "spans": sp}]} for s, sp in spans.items()]}
json.dump(doc, open(sys.argv[1], "w"))
PY
"$TT_BIN" import -q --db "$TUI_TMP/e.db" "$TUI_TMP/spans.json" || tui_fail "import failed"

tui_start 110 30 --db "$TUI_TMP/e.db" --window 2026-07-14T18:10:00Z..2026-07-14T18:20:00Z \
  --baseline 2026-07-14T18:00:00Z..2026-07-14T18:10:00Z

# opened on the endpoint that slowed, which the header names
tui_wait "^shop GET /api/cart/\{id\} \(1 of 2 endpoints: e\)" "the slowed endpoint is not the one opened"
tui_wait "cart-svc" "the cart endpoint's DAG does not show its dependency"
grep -Eq "endpoint shop GET /api/cart/\{id\}: its p9[09] rose the most significantly" "$TUI_TMP/tui.err" ||
  tui_fail "the dashboard did not say why it opened that endpoint"

# e: the list, ranked, the open one marked
tui_keys e
tui_wait "Endpoints\]" "e did not open the Endpoints pane"
tui_wait "1\* +shop GET /api/cart/\{id\} +150 " "the cart endpoint is not first and marked"
tui_wait "2 +shop GET /api/items/\{id\} +450 " "the items endpoint is not listed second"
tui_wait "p90 \+2[0-9][0-9] ms" "the cart endpoint's rise (on its p90: 150 requests cannot bound a p99) is not shown"

# } switches in one keystroke: header and DAG follow
tui_keys '}'
tui_wait "^shop GET /api/items/\{id\} \(2 of 2 endpoints: e\)" "} did not switch to the next endpoint"
tui_keys 1
tui_wait "catalog" "the items endpoint's DAG does not show catalog"
tui_gone "cart-svc" "the DAG still shows the cart endpoint's dependency"
# { goes back
tui_keys '{'
tui_wait "^shop GET /api/cart/\{id\} \(1 of 2 endpoints: e\)" "{ did not switch back"
tui_wait "cart-svc" "the cart DAG did not come back"

# Enter on the second row of the list opens it
tui_keys e
tui_wait "Endpoints\]" "e did not open the Endpoints pane again"
tui_keys j Enter
tui_wait "^shop GET /api/items/\{id\} \(2 of 2 endpoints: e\)" "Enter did not open the marked endpoint"
tui_wait "catalog" "Enter did not show the endpoint's DAG"

# --endpoint opens the one named
tui_quit
tmux_stop "$TUI_SOCK"
TUI_SOCK="tt-tui-$$-$RANDOM"
rm -f "$TUI_TMP/tui.rc"
tui_start 110 30 --db "$TUI_TMP/e.db" --endpoint shop 'GET /api/items/{id}' \
  --window 2026-07-14T18:10:00Z..2026-07-14T18:20:00Z --baseline 2026-07-14T18:00:00Z..2026-07-14T18:10:00Z
tui_wait "^shop GET /api/items/\{id\} \(2 of 2 endpoints: e\)" "--endpoint did not open the endpoint named"
tui_quit
echo "tui_endpoints: ok"
