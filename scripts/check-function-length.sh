#!/usr/bin/env bash
# The function-length rule of STYLE.md, checked: no function in src/ or python/ over 80 lines,
# kernels in src/reference/ops/ (one op per file, whose loops are the op) over 160. Lines are
# lizard's "length" (from the signature to the closing brace, comments included). lizard 1.17.10
# comes from PyPI into a venv of its own, checked against its sha256; nothing else is installed.
# Usage: scripts/check-function-length.sh [VENV_DIR]   (default build/lizard-venv)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-build/lizard-venv}"
WHEEL=lizard-1.17.10-py2.py3-none-any.whl
SHA256=686748cc003de54d3e37f84b6cbbdd975be41a2094f0a779cb7fef65e70fc53e
if [ ! -x "$VENV/bin/lizard" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --require-hashes --no-deps \
    -r /dev/stdin <<<"lizard==1.17.10 --hash=sha256:$SHA256" ||
    { echo "cannot install lizard 1.17.10 ($WHEEL) from PyPI" >&2; exit 2; }
fi
# -C and -a set so high that only the length rule (-L) reports; -w prints warnings alone.
common=(-C 100000 -a 100 -w -l cpp -l python)
status=0
"$VENV/bin/lizard" "${common[@]}" -L 80 -x 'src/reference/ops/*' src python || status=1
"$VENV/bin/lizard" "${common[@]}" -L 160 src/reference/ops || status=1
if [ "$status" != 0 ]; then
  echo "functions above are longer than the rule (80 lines; 160 in src/reference/ops/):" \
       "split them (STYLE.md)" >&2
fi
exit "$status"
