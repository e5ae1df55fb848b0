#!/usr/bin/env bash
# design_links.sh - docs/design.md's table "Who links whom" says which
# project libraries each folder links; the build must say the same. Reads
# every target_link_libraries() of the folder's CMakeLists.txt (the cli's
# list is assembled in a variable, so its tt_* names count too) and
# compares the set of tt_* libraries with the table's "links (project)".
set -eu
TT_SRC=${TT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
fail() { echo "FAIL: $*" >&2; exit 1; }
doc="$TT_SRC/docs/design.md"
[ -f "$doc" ] || fail "docs/design.md is missing"
checked=0
for dir in common store importers analysis sim drills tui cli; do
  row=$(grep -E "^\| \`$dir/\` \|" "$doc" || true)
  [ -n "$row" ] || fail "docs/design.md has no row for $dir/"
  want=$(echo "$row" | awk -F'|' '{print $4}' | tr ',' '\n' | sed 's/ //g' | grep -v '^$' | sort -u | tr '\n' ' ')
  self="tt_$dir"
  [ "$dir" = cli ] && self=tt_cli_lib
  have=$(sed 's/#.*//' "$TT_SRC/$dir/CMakeLists.txt" | tr '\n' ' ' \
    | grep -oE '(target_link_libraries\([^)]*\)|set\(TT_CLI_LIBS[^)]*\)|list\(PREPEND TT_CLI_LIBS[^)]*\))' \
    | grep -oE '\btt_[a-z_]+' | grep -v -x -e "$self" -e tt_cli_lib -e tailtriage \
    | sed 's/^tt_//' | sort -u | tr '\n' ' ')
  [ "$want" = "$have" ] || fail "$dir/: docs/design.md says it links '$want', CMake links '$have'"
  checked=$((checked + 1))
done
echo "design_links: $checked folders agree"
