#!/usr/bin/env bash
# install-deps.sh: installs everything onnxdbg needs on a fresh Debian 12 machine, idempotently.
# Debian packages come from apt-get; ONNX Runtime comes from npm packages (fetched with
# `npm pack NAME@VERSION`, checked against a recorded sha256, extracted into third_party/, which
# git ignores). Nothing downloaded here is ever committed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TP="$ROOT/third_party"
CACHE="$TP/cache"

APT_PACKAGES=(
  cmake g++ make pkg-config
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libopencv-dnn-dev libopencv-core-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev
  libopenblas-dev libzip-dev zlib1g-dev
  libopenblas0-pthread  # the build the reference links: safe to call from several threads
  python3-onnx  # the reduce benchmark's external check (bench/check_op_present.py), as Polygraphy's
  chromium  # headless browser for the HTML viewer's tests and benchmark (driven by playwright-core)
  clang-format-14  # `make format-check` (run by .ci/run): the tree's C++ follows .clang-format
  # The Python package (python/): its binding, and its tests with Debian's /usr/bin/python3
  pybind11-dev python3-dev python3-numpy python3-pytest python3-torch python3-torchvision
)
# npm may come from outside apt (a newer Node.js); ask apt for it only when it is missing.
command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(nodejs npm)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime: headers from com.github.asus4.onnxruntime (MIT, Microsoft's public headers) and the
# CPU shared library from the same package.
ORT_SPEC="com.github.asus4.onnxruntime@0.4.9"
ORT_SHA256="e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d"
ORT_DIR="$TP/onnxruntime"
if [ ! -f "$ORT_DIR/.complete" ]; then
  mkdir -p "$CACHE" "$ORT_DIR"
  tgz="$CACHE/onnxruntime-asus4-0.4.9.tgz"
  if [ ! -f "$tgz" ]; then
    echo "install-deps: npm pack $ORT_SPEC"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack "$ORT_SPEC" --ignore-scripts --silent >/dev/null)
    mv "$tmp"/*.tgz "$tgz"; rm -rf "$tmp"
  fi
  got=$(sha256sum "$tgz" | cut -d' ' -f1)
  if [ "$got" != "$ORT_SHA256" ]; then
    echo "install-deps: sha256 mismatch for $ORT_SPEC: got $got, expected $ORT_SHA256" >&2
    rm -f "$tgz"; exit 1
  fi
  rm -rf "$ORT_DIR"; mkdir -p "$ORT_DIR/include" "$ORT_DIR/lib"
  tmp=$(mktemp -d)
  hdr='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
  tar -xzf "$tgz" -C "$tmp" "$hdr" package/Plugins/Linux/x64/libonnxruntime.so package/LICENSE \
    package/ThirdPartyNotices.txt
  cp "$tmp/$hdr"/*.h "$ORT_DIR/include/"
  cp "$tmp/package/Plugins/Linux/x64/libonnxruntime.so" "$ORT_DIR/lib/libonnxruntime.so.1"
  ln -sf libonnxruntime.so.1 "$ORT_DIR/lib/libonnxruntime.so"
  cp "$tmp/package/LICENSE" "$tmp/package/ThirdPartyNotices.txt" "$ORT_DIR/"
  rm -rf "$tmp"
  touch "$ORT_DIR/.complete"
fi
# npm_fetch NAME@VERSION SHA256 TGZ_NAME: `npm pack` into the cache once, then check the sha256.
npm_fetch() {
  local spec=$1 sha=$2 tgz="$CACHE/$3"
  mkdir -p "$CACHE"
  if [ ! -f "$tgz" ]; then
    echo "install-deps: npm pack $spec"
    local tmp; tmp=$(mktemp -d)
    (cd "$tmp" && npm pack "$spec" --ignore-scripts --silent >/dev/null)
    mv "$tmp"/*.tgz "$tgz"; rm -rf "$tmp"
  fi
  local got; got=$(sha256sum "$tgz" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "install-deps: sha256 mismatch for $spec: got $got, expected $sha" >&2
    rm -f "$tgz"; exit 1
  fi
}

# dagre (MIT): the graph layout library the HTML viewer embeds into its pages at build time.
DAGRE_DIR="$TP/dagre"
if [ ! -f "$DAGRE_DIR/.complete" ]; then
  npm_fetch "@dagrejs/dagre@3.1.3" 12441833c8af49e5a241d94bfd53159875965876b3f4f3214abafe1ed6a9ee4c \
    dagrejs-dagre-3.1.3.tgz
  rm -rf "$DAGRE_DIR"; mkdir -p "$DAGRE_DIR"
  tar -xzf "$CACHE/dagrejs-dagre-3.1.3.tgz" -C "$DAGRE_DIR" package/LICENSE package/package.json \
    package/dist/dagre.min.js package/dist/dagre.min.js.LEGAL.txt
  touch "$DAGRE_DIR/.complete"
fi

# playwright-core (Apache-2.0): drives Debian's chromium in the viewer's tests and benchmark
# (its own browser download is not used). Laid out as node_modules so `require` finds it.
PW_DIR="$TP/playwright/node_modules/playwright-core"
if [ ! -f "$PW_DIR/.complete" ]; then
  npm_fetch "playwright-core@1.65.1" 6f5a60be62a4fddfbe7d10c448d8fbd54547da3358f2f8a04211440471ee863e \
    playwright-core-1.65.1.tgz
  rm -rf "$PW_DIR"; mkdir -p "$PW_DIR"
  tar -xzf "$CACHE/playwright-core-1.65.1.tgz" -C "$PW_DIR" --strip-components=1
  touch "$PW_DIR/.complete"
fi
echo "install-deps: all dependencies present"
