#!/usr/bin/env bash
# replay.sh REPLAY_BINARY TARGET DIR: runs every input kept in DIR (the fuzz target's regression
# inputs) through the target; fails when the folder is empty (a target without a kept input
# checks nothing) or when any input crashes.
set -euo pipefail
bin=$1 target=$2 dir=$3
mapfile -t files < <(find "$dir" -type f ! -name '*.md' | sort)
if [ ${#files[@]} -eq 0 ]; then
  echo "no regression inputs in $dir" >&2
  exit 1
fi
exec "$bin" "$target" "${files[@]}"
