#!/usr/bin/env bash
# analysis_memory.sh - a command that analyses tunes glibc's allocator for
# itself (README.md, "Commands") by starting itself again with
# GLIBC_TUNABLES set. As a user would notice it, in a real terminal:
#  - the dashboard runs, under its own name (ps, top and pkill see
#    `tailtriage`, not the `exe` of /proc/self/exe), with the documented
#    setting in its environment;
#  - started with the user's own GLIBC_TUNABLES, it keeps exactly those.
source "$(dirname "${BASH_SOURCE[0]}")/tui_lib.bash"
tui_fixture
ARGS=(--db "$TUI_TMP/f.db" --model "$TUI_TMP/model.json"
      --window 1784052600000..1784053200000 --baseline 1784052000000..1784052600000)

# tunables_of PID: the GLIBC_TUNABLES value in PID's environment ("" if none)
tunables_of() {
  tr '\0' '\n' < "/proc/$1/environ" | sed -n 's/^GLIBC_TUNABLES=//p'
}

tui_start 100 30 "${ARGS[@]}"
tui_wait "GET /v2/home" "the dashboard did not start"
pid=$(tui_pid)
[ -n "$pid" ] || tui_fail "no dashboard process under the pane"
[ "$(ps -o comm= -p "$pid")" = "$(basename "$TT_BIN")" ] ||
  tui_fail "the process is called '$(ps -o comm= -p "$pid")', not $(basename "$TT_BIN")"
# glibc may cut the string where it parsed it; its start is ours
case $(tunables_of "$pid") in
  glibc.malloc.hugetlb=1*) ;;
  *) tui_fail "GLIBC_TUNABLES is '$(tunables_of "$pid")', not the documented setting" ;;
esac
tui_quit
tmx kill-session -t t

TUI_ENV="GLIBC_TUNABLES=glibc.malloc.perturb=0" tui_start 100 30 "${ARGS[@]}"
tui_wait "GET /v2/home" "the dashboard did not start with the user's GLIBC_TUNABLES"
pid=$(tui_pid)
[ "$(tunables_of "$pid")" = "glibc.malloc.perturb=0" ] ||
  tui_fail "the user's GLIBC_TUNABLES became '$(tunables_of "$pid")'"
tui_quit
echo "analysis_memory: ok"
