#!/usr/bin/env bash
# `make test` runs this around ctest: `snapshot BUILD` before (empties BUILD/test-tmp, the TMPDIR
# every test gets, and notes what the source tree and BUILD's top level hold), `check BUILD` after:
# fails, listing them, when the tests left files in BUILD/test-tmp, in BUILD's top level or in
# the source tree. usage: check-test-leftovers.sh snapshot|check BUILD
set -euo pipefail
mode=${1:?usage: check-test-leftovers.sh snapshot|check BUILD} build=${2:?BUILD folder}
cd "$(dirname "$0")/.."
tmp="$build/test-tmp"
snap="$build/CMakeFiles/onnxdbg-test-leftovers"

# One line per entry: BUILD's top level (ctest's own Testing/ aside), then the source tree as git
# sees it (untracked and ignored entries, changed tracked files; build folders are ignored, so
# they show as one line each).
entries() {
  ls -A "$build" | grep -vx 'Testing' | sed "s|^|$build/|"
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git status --porcelain=v1 --untracked-files=normal --ignored=matching | cut -c4-
  fi
}

case "$mode" in
  snapshot)
    mkdir -p "$(dirname "$snap")"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    entries | sort -u > "$snap"
    ;;
  check)
    fail=0
    left=$( [ -d "$tmp" ] && ls -A "$tmp" || true)
    if [ -n "$left" ]; then
      echo "test leftovers: the tests left these in $tmp (their TMPDIR):" >&2
      echo "$left" | sed 's/^/  /' >&2
      fail=1
    fi
    if [ -f "$snap" ]; then
      new=$(entries | sort -u | comm -13 "$snap" -)
      if [ -n "$new" ]; then
        echo "test leftovers: these appeared in the build folder or the source tree during the tests:" >&2
        echo "$new" | sed 's/^/  /' >&2
        fail=1
      fi
    fi
    [ $fail -eq 0 ] && echo "test leftovers: none ($tmp empty, no new files)"
    exit $fail
    ;;
  *)
    echo "usage: check-test-leftovers.sh snapshot|check BUILD" >&2
    exit 2
    ;;
esac
