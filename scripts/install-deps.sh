#!/usr/bin/env bash
# install-deps.sh: installs everything onnxdbg needs on a fresh Debian 12 machine, idempotently.
# Debian packages come from apt-get; ONNX Runtime comes from npm packages (fetched with
# `npm pack NAME@VERSION`, checked against a recorded sha256, extracted into third_party/, which
# git ignores); the ONNX C++ library is built from the onnx source distribution on PyPI (below).
# Nothing downloaded here is ever committed.
# Usage: install-deps.sh [--demo]. With --demo, only what the CLI and the worker need to build and
# run (`make demo`); without, also what the tests, benchmarks and checks need (every other target).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TP="$ROOT/third_party"
CACHE="$TP/cache"

# What building the CLI and the worker needs: all that `make demo` installs (install-deps.sh --demo).
APT_PACKAGES=(
  cmake g++ make pkg-config
  libprotobuf-dev protobuf-compiler ccache
  libopencv-dnn-dev libopencv-core-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev
  libopenblas-dev libzip-dev zlib1g-dev
  libssl-dev  # OpenSSL's SHA-256: the keys of batch's result cache
  libopenblas0-pthread  # the build the reference links: safe to call from several threads
  # The Python package (python/): configured with the build, built by `make`, not by `make demo`
  pybind11-dev python3-dev python3-numpy
)
# What the tests, benchmarks and checks add (every target but `make demo`).
APT_TEST_PACKAGES=(
  libonnx-testdata  # ONNX 1.12's backend test cases
  python3-onnx  # the reduce benchmark's external check (bench/check_op_present.py), as Polygraphy's
  chromium  # headless browser for the HTML viewer's tests and benchmark (driven by playwright-core)
  clang-format-14  # `make format-check` (run by .ci/run): the tree's C++ follows .clang-format
  # The Python package's tests with Debian's /usr/bin/python3
  python3-pytest python3-torch python3-torchvision
  python3-venv  # venvs of Debian's python3: make test-pip, test-wheel
)
DEMO=0
[ "${1:-}" = "--demo" ] && DEMO=1
[ $DEMO -eq 1 ] || APT_PACKAGES+=("${APT_TEST_PACKAGES[@]}")
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
if [ $DEMO -eq 0 ] && [ ! -f "$PW_DIR/.complete" ]; then
  npm_fetch "playwright-core@1.65.1" 6f5a60be62a4fddfbe7d10c448d8fbd54547da3358f2f8a04211440471ee863e \
    playwright-core-1.65.1.tgz
  rm -rf "$PW_DIR"; mkdir -p "$PW_DIR"
  tar -xzf "$CACHE/playwright-core-1.65.1.tgz" -C "$PW_DIR" --strip-components=1
  touch "$PW_DIR/.complete"
fi

# pip_fetch SPEC SHA256 FILE [pip download options...]: `pip download` into the cache once, then
# check the sha256.
pip_fetch() {
  local spec=$1 sha=$2 name=$3 file="$CACHE/$3"; shift 3
  mkdir -p "$CACHE"
  if [ ! -f "$file" ]; then
    echo "install-deps: pip download $spec"
    local tmp; tmp=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --dest "$tmp" "$@" "$spec" >&2
    mv "$tmp/$name" "$file"; rm -rf "$tmp"
  fi
  local got; got=$(sha256sum "$file" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "install-deps: sha256 mismatch for $spec: got $got, expected $sha" >&2
    rm -f "$file"; exit 1
  fi
}

# ONNX (Apache-2.0): the C++ library onnxdbg links for the model format, checker, shape
# inference, op schemas, function bodies and the version converter, at the newest release
# (opsets up to 28, IR up to 13; Debian 12 has 1.12). Built from the `onnx` source distribution
# on PyPI against Debian's protobuf, with ONNX_NAMESPACE=onnx_onnxdbg: its classes and .proto file
# names then cannot collide with another ONNX in the same process (PyTorch loads Debian's
# libonnx 1.12). Its CMakeLists asks for CMake >= 3.26, which comes from PyPI's `cmake` wheel.
# The built library is cached outside the tree (ONNXDBG_CACHE, default ~/.cache/onnxdbg), keyed
# by version, compiler and protobuf, so a fresh clone on the same machine links it at once;
# third_party/onnx points at it.
ONNX_VERSION=1.23.0
ONNX_SHA256=3f4b7323ea3397c63aa6ff5d43abe16013ffefc0a96cb8a0be6527ff1e1add40
CMAKE_WHEEL=cmake-4.4.5-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
CMAKE_WHEEL_SHA256=85625a9b6d5e88ff99c7eb79123d85570844e77ac076366cf75c609cc0b1b579
ONNX_CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DONNX_ML=ON -DONNX_NAMESPACE=onnx_onnxdbg
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_TESTS=OFF -DONNX_BUILD_PYTHON=OFF
  -DONNX_GEN_PB_TYPE_STUBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
ONNX_KEY=$( (echo "$ONNX_VERSION ${ONNX_CMAKE_FLAGS[*]}"; c++ --version | head -1; protoc --version) |
  sha256sum | cut -c1-12)
ONNX_CACHE="${ONNXDBG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onnxdbg}"
ONNX_PREFIX="$ONNX_CACHE/onnx-$ONNX_VERSION-$ONNX_KEY"
if [ ! -f "$ONNX_PREFIX/.complete" ]; then
  pip_fetch "onnx==$ONNX_VERSION" "$ONNX_SHA256" "onnx-$ONNX_VERSION.tar.gz" --no-binary onnx
  CMAKE_BIN=cmake
  if ! cmake --version | head -1 | awk '{split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 26))}'; then
    pip_fetch "cmake==4.4.5" "$CMAKE_WHEEL_SHA256" "$CMAKE_WHEEL" --only-binary :all:
    if [ ! -x "$TP/cmake/data/bin/cmake" ]; then
      rm -rf "$TP/cmake.tmp"
      python3 -m zipfile -e "$CACHE/$CMAKE_WHEEL" "$TP/cmake.tmp"
      chmod +x "$TP/cmake.tmp/cmake/data/bin/"*
      rm -rf "$TP/cmake"; mv "$TP/cmake.tmp/cmake" "$TP/cmake"; rm -rf "$TP/cmake.tmp"
    fi
    CMAKE_BIN="$TP/cmake/data/bin/cmake"
  fi
  echo "install-deps: building ONNX $ONNX_VERSION's C++ library (a few minutes, once per machine)"
  mkdir -p "$ONNX_CACHE"
  work=$(mktemp -d "$ONNX_CACHE/build.XXXXXX")
  tar -xzf "$CACHE/onnx-$ONNX_VERSION.tar.gz" -C "$work"
  launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # ccache (where installed) sees paths relative to the build folder, whose name is random.
  CCACHE_BASEDIR="$work" "$CMAKE_BIN" -S "$work/onnx-$ONNX_VERSION" -B "$work/build" "${ONNX_CMAKE_FLAGS[@]}" "${launcher[@]}" \
    -DCMAKE_INSTALL_PREFIX="$work/prefix" > "$work/configure.log" 2>&1 ||
    { echo "install-deps: configuring ONNX failed; see $work/configure.log" >&2; exit 1; }
  CCACHE_BASEDIR="$work" "$CMAKE_BIN" --build "$work/build" -j "$(nproc)" > "$work/build.log" 2>&1 ||
    { echo "install-deps: building ONNX failed; see $work/build.log" >&2; exit 1; }
  "$CMAKE_BIN" --install "$work/build" > "$work/install.log" 2>&1 ||
    { echo "install-deps: installing ONNX failed; see $work/install.log" >&2; exit 1; }
  cp "$work/onnx-$ONNX_VERSION/LICENSE" "$work/prefix/"
  touch "$work/prefix/.complete"
  rm -rf "$ONNX_PREFIX"; mv "$work/prefix" "$ONNX_PREFIX"; rm -rf "$work"
fi
[ "$(readlink "$TP/onnx" 2>/dev/null)" = "$ONNX_PREFIX" ] || { rm -rf "$TP/onnx"; ln -s "$ONNX_PREFIX" "$TP/onnx"; }
# pybind11 (BSD-3-Clause): the Python extension's binding library, the release the wheel builds
# with (pyproject.toml pins the same), from its PyPI wheel (headers and CMake files), unpacked;
# cmake/python.cmake prefers it to Debian's 2.10, whose handles do not check that the GIL is held
# (PYBIND11_ASSERT_GIL_HELD_INCREF_DECREF, 2.11 and on), so that `make test` runs the Python suite
# with the same checks as the installed wheel.
PYBIND11_VERSION=3.1.0
PYBIND11_WHEEL=pybind11-$PYBIND11_VERSION-py3-none-any.whl
if [ ! -f "$TP/pybind11/.complete-$PYBIND11_VERSION" ]; then
  pip_fetch "pybind11==$PYBIND11_VERSION" b8488090f8acffbcb6b5d6a85571a6827a0a2981ffb75e5a0b27b87c4a6b7dd0 \
    "$PYBIND11_WHEEL" --only-binary :all:
  rm -rf "$TP/pybind11.tmp"
  python3 -m zipfile -e "$CACHE/$PYBIND11_WHEEL" "$TP/pybind11.tmp"
  touch "$TP/pybind11.tmp/.complete-$PYBIND11_VERSION"
  rm -rf "$TP/pybind11"; mv "$TP/pybind11.tmp" "$TP/pybind11"
fi
# ml_dtypes (Apache-2.0): numpy's dtypes for ONNX's narrow types (float8, int4, ...), with which
# the Python tests check that numpy reads onnxdbg's .npy files of them and that such arrays go in
# and out of the package. Only the tests use it (the python.pytest test puts third_party/ml_dtypes
# on PYTHONPATH): the wheel for Debian 12's Python 3.11 on x86-64, unpacked. Without it (another
# machine, no network) those tests are skipped, so a failed download does not stop the build.
ML_DTYPES_WHEEL=ml_dtypes-0.5.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
if [ $DEMO -eq 0 ] && [ ! -f "$TP/ml_dtypes/.complete" ] && [ "$(uname -m)" = x86_64 ] &&
  /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  if (pip_fetch "ml_dtypes==0.5.1" c09526488c3a9e8b7a23a388d4974b670a9a3dd40c5c8a61db5593ce9b725bab \
    "$ML_DTYPES_WHEEL" --only-binary :all: --python-version 3.11 --platform manylinux2014_x86_64); then
    rm -rf "$TP/ml_dtypes.tmp"
    python3 -m zipfile -e "$CACHE/$ML_DTYPES_WHEEL" "$TP/ml_dtypes.tmp"
    touch "$TP/ml_dtypes.tmp/.complete"
    rm -rf "$TP/ml_dtypes"; mv "$TP/ml_dtypes.tmp" "$TP/ml_dtypes"
  else
    echo "install-deps: ml_dtypes not fetched; the narrow-type Python tests will be skipped" >&2
  fi
fi
if [ $DEMO -eq 1 ]; then echo "install-deps: the CLI's dependencies present"
else echo "install-deps: all dependencies present"; fi
