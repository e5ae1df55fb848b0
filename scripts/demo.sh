#!/usr/bin/env bash
# scripts/demo.sh - install what is missing, build, and run `tailtriage demo`
# (generates the bundled Mercury sample, imports it into a fresh database
# and opens the dashboard). Extra arguments go to `tailtriage demo`.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tt_install_packages
# the first build takes a minute or two on two cores: say how far it got
tt_build_quiet "$TT_ROOT/build"
exec "$TT_ROOT/build/cli/tailtriage" demo "$@"
