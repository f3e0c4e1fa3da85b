#!/usr/bin/env bash
# make_corpus.sh BUILD MODELS OUT: the seed corpus of every fuzz target, in OUT/<target>/:
#   model, reference: ONNX 1.12's conformance models (Debian's libonnx-testdata), the public models
#     under MODELS and the hostile models of make-broken-models, each at most 256 KB (64 KB for
#     the reference);
#   tensor_proto: the conformance cases' input and output .pb files (at most 64 KB);
#   npz, npy, polygraphy_json: inputs and outputs onnxdbg itself saved (`run --save-inputs/outputs`)
#     for a few conformance models, and the .npy entries of those archives;
#   every target: its regression inputs (tests/fuzz/regressions/<target>/).
# Kept between runs (libFuzzer adds what it finds); remade when OUT/.complete is missing.
set -euo pipefail
build=$1 models=$2 out=$3
mkdir -p "$out" && out=$(cd "$out" && pwd)
[ -f "$out/.complete" ] && exit 0
rm -rf "$out"
mkdir -p "$out"/{model,reference,tensor_proto,npz,npy,polygraphy_json}
data=/usr/share/libonnx-testdata/data
i=0
while IFS= read -r f; do
  size=$(stat -c %s "$f")
  i=$((i + 1))
  [ "$size" -le 262144 ] && cp "$f" "$out/model/c$i.onnx"
  [ "$size" -le 65536 ] && cp "$f" "$out/reference/c$i.onnx"
done < <(find "$data" -name model.onnx | sort)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find "$data" -path '*test_data_set_0/*.pb' -size -64k | sort >"$tmp/pb.txt"
sed -n 1,2000p "$tmp/pb.txt" | \
  while IFS= read -r f; do cp "$f" "$out/tensor_proto/$(echo "$f" | md5sum | cut -c1-16).pb"; done
if [ -d "$models" ]; then
  find "$models" -name '*.onnx' -size -256k | while IFS= read -r f; do
    cp "$f" "$out/model/public-$(basename "$f")"; done
fi
for m in "$models"/*.onnx; do
  [ -f "$m" ] || continue
  "$build/make-broken-models" "$m" "$tmp/broken" >/dev/null 2>&1 || continue
  find "$tmp/broken" -name '*.onnx' -size -256k | while IFS= read -r f; do
    cp "$f" "$out/model/broken-$(basename "$m" .onnx)-$(basename "$f")"; done
  rm -rf "$tmp/broken"
done
n=0
for t in test_add test_matmul_2d test_cast_FLOAT_to_STRING test_gather_0 test_equal test_argmax_default_axis_example \
         test_slice test_reshape_extended_dims test_sequence_insert_at_back test_identity_opt; do
  [ -f "$data/node/$t/model.onnx" ] || continue
  n=$((n + 1))
  "$build/onnxdbg" run "$data/node/$t/model.onnx" --backends reference \
    --save-inputs "$tmp/in$n.npz" --save-outputs "$tmp/out$n.npz" >/dev/null 2>&1 || true
  "$build/onnxdbg" run "$data/node/$t/model.onnx" --backends reference \
    --save-inputs "$tmp/in$n.json" --save-outputs "$tmp/out$n.json" >/dev/null 2>&1 || true
done
find "$tmp" -maxdepth 1 -name '*.npz' -exec cp {} "$out/npz/" \;
find "$tmp" -maxdepth 1 -name '*.json' -exec cp {} "$out/polygraphy_json/" \;
for z in "$out"/npz/*.npz; do
  [ -f "$z" ] || continue
  d="$tmp/x-$(basename "$z" .npz)"
  mkdir -p "$d" && (cd "$d" && unzip -qo "$z") || true
done
find "$tmp" -path '*/x-*' -name '*.npy' | while IFS= read -r f; do
  cp "$f" "$out/npy/$(echo "$f" | md5sum | cut -c1-16).npy"; done
here=$(cd "$(dirname "$0")" && pwd)
for t in model reference tensor_proto npz npy polygraphy_json; do
  cp "$here/regressions/$t"/* "$out/$t/" 2>/dev/null || true
  echo "corpus $t: $(find "$out/$t" -type f | wc -l) seeds"
done
touch "$out/.complete"
