#!/usr/bin/env bash
# tests/python/run.sh PYTHON: runs the Python package's tests with pytest, its temporary folders
# in one folder of TMPDIR that is removed afterwards (pytest keeps its basetemp otherwise).
set -uo pipefail
py=$1; shift
base=$(mktemp -d)
"$py" -m pytest -q -p no:cacheprovider --basetemp="$base/pytest" "$(dirname "$0")" "$@"
rc=$?
rm -rf "$base"
exit $rc
