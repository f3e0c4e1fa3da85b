# Sourced by the CLI test scripts (tests/cli/*.sh; this folder is not a test), after they have
# read their arguments: a temporary folder of the script's own, removed on exit, as the working
# directory (whatever onnxdbg writes by default goes there too); `fail`, which the script exits
# with; check NAME CONDITION, which prints "ok   NAME" or "FAIL NAME" and sets fail=1; and
# require_debian_onnx for scripts that build their models with Debian's python3.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# Exits the test, failing it, when Debian's python3 cannot import onnx.
require_debian_onnx() {
  if ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
    echo "FAIL: Debian's python3 lacks onnx (scripts/install-deps.sh installs it)"
    exit 1
  fi
}
