# tmux_stop.bash - stopping a test's tmux server for good. Sourced, not run.
#
# `tmux kill-server` returns before the programs in its panes have exited.
# A pane that runs `tailtriage tui ...; echo $? >DIR/tui.rc` can then
# still write into DIR while the test's EXIT trap removes it ("Directory
# not empty"). tmux_stop waits for them.

# tmux_stop SOCK: kills the tmux server on socket SOCK and waits (up to
# 5 s, then SIGKILL) until every pane's program and its children have
# exited.
tmux_stop() {
  local sock=$1 pids="" p i alive
  for p in $(tmux -L "$sock" list-panes -a -F '#{pane_pid}' 2>/dev/null || true); do
    pids+=" $p $(cat /proc/"$p"/task/*/children 2>/dev/null || true)"
  done
  tmux -L "$sock" kill-server 2>/dev/null || true
  for i in $(seq 1 50); do
    alive=0
    for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.1
  done
  for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
}
