#!/usr/bin/env bash
# ONNX 1.23's backend tests (node, simple, pytorch-converted, pytorch-operator: 1,942 cases, opsets
# up to 28) on the reference and ONNX Runtime. Fails when a case listed in onnx-1.23-expected.txt
# (one "backend case" line per case that passed when the list was made) no longer passes; cases
# that pass and are not listed are printed, with how to add them.
#
# usage: onnx-1.23.sh ONNXDBG SHARED_DIR [--update]
#   The data: SHARED_DIR/onnx-tests/onnx-1.23-backend-data.tgz (sha256-checked), or a folder of
#   extracted cases named by ONNXDBG_ONNX_TESTS. Without either the test is skipped (exit 77).
#   --update rewrites onnx-1.23-expected.txt from this run.
set -uo pipefail
bin=$(realpath -m "$1")
shared=$(realpath -m "${2:-.}")
update=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
expected="$here/onnx-1.23-expected.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

data=${ONNXDBG_ONNX_TESTS:-}
if [ -z "$data" ]; then
  archive="$shared/onnx-tests/onnx-1.23-backend-data.tgz"
  if [ ! -f "$archive" ]; then
    echo "SKIP: ONNX 1.23's backend test data is not at $archive. Get it with onnx 1.23's" \
      "Python package (pip install onnx==1.23.0; python -m onnx.backend.test.cmd_tools" \
      "generate-data -o DIR) and set ONNXDBG_ONNX_TESTS=DIR (the folder holding node/), or put the archive there."
    exit 77
  fi
  want=$(cut -d' ' -f1 "$archive.sha256" 2>/dev/null)
  got=$(sha256sum "$archive" | cut -d' ' -f1)
  if [ -n "$want" ] && [ "$want" != "$got" ]; then
    echo "FAIL: $archive has sha256 $got, $archive.sha256 says $want"
    exit 1
  fi
  tar -xzf "$archive" -C "$tmp" || { echo "FAIL: cannot extract $archive"; exit 1; }
  data="$tmp"
fi
dirs=()
for d in node simple pytorch-converted pytorch-operator; do [ -d "$data/$d" ] && dirs+=("$data/$d"); done
[ ${#dirs[@]} -gt 0 ] || { echo "FAIL: no node/, simple/, pytorch-*/ folder under $data"; exit 1; }

start=$(date +%s)
"$bin" conformance --backends reference,onnxruntime "${dirs[@]}" --json > results.json 2> stderr.txt
rc=$?
echo "onnxdbg conformance exited $rc in $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
  echo "FAIL: onnxdbg conformance exited $rc:"; cat stderr.txt; exit 1
fi
python3 - results.json "$expected" "$update" <<'PY'
import json, sys
results, expected_path, update = sys.argv[1], sys.argv[2], sys.argv[3] == "--update"
doc = json.load(open(results))
passed, reasons = set(), {}
for tally in doc["backends"]:
    counts = {}
    for c in tally["cases"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
        key = f'{tally["backend"]} {c["case"]}'
        if c["status"] == "pass":
            passed.add(key)
        else:
            reasons[key] = f'{c["status"]}: {c["reason"][:300]}'
    print(f'{tally["backend"]}: {counts.get("pass", 0)} passed, {counts.get("fail", 0)} failed, '
          f'{counts.get("unsupported", 0)} unsupported of {len(tally["cases"])}')
if update:
    with open(expected_path, "w") as f:
        f.write("# Cases of ONNX 1.23's backend tests that pass, one 'backend case' per line;\n"
                "# written by tests/conformance/onnx-1.23.sh --update. A listed case that stops\n"
                "# passing fails `make test`.\n")
        f.writelines(k + "\n" for k in sorted(passed))
    print(f"wrote {len(passed)} passing cases to {expected_path}")
    sys.exit(0)
expected = {l.strip() for l in open(expected_path) if l.strip() and not l.startswith("#")}
lost = sorted(expected - passed)
gained = sorted(passed - expected)
for k in lost:
    print(f"REGRESSION {k}: {reasons.get(k, 'not run')}")
if gained:
    print(f"{len(gained)} cases pass that {expected_path} does not list (add them with "
          f"tests/conformance/onnx-1.23.sh ONNXDBG SHARED --update):")
    for k in gained[:40]:
        print("  " + k)
print(f"{len(expected)} expected passes, {len(lost)} lost, {len(gained)} new")
sys.exit(1 if lost else 0)
PY
