#!/usr/bin/env python3
"""Adds the license texts of everything a repaired onnxdbg wheel redistributes to the wheel.

Usage: wheel_licenses.py WHEEL ROOT  (scripts/build-wheel.sh runs it after `auditwheel repair`;
ROOT is the checkout, whose third_party/ holds the fetched components).

The wheel ships third-party code: the libraries auditwheel grafted into ``onnxdbg.libs/``
(OpenBLAS, OpenCV, protobuf, fmt, libzip, libgfortran, ...), ONNX Runtime's library in
``onnxdbg/lib/``, and what is compiled into the extension, the CLI and the worker (ONNX,
pybind11, CLI11, nlohmann-json, the viewer's dagre). Their licenses (MIT, BSD, Apache-2.0, GPL
with the GCC runtime exception) ask that binary copies carry their notices. This writes them into
``<name>.dist-info/licenses/`` (PEP 639's place):

- ``debian/<package>.copyright``: Debian's copyright file of the package each grafted library
  came from (``dpkg -S`` on the library's name before auditwheel renamed it), and of the
  header-only libraries taken from Debian;
- ``<component>/...``: the license files the fetched components ship;
- ``THIRD_PARTY.txt``: one line per component: what it is, where it is in the wheel, which file
  holds its license.

RECORD is rewritten with the new files' sha256 and sizes, and the wheel is replaced atomically.
Exits 1, naming the library, when a grafted library's Debian package cannot be found: a wheel
that would ship code without its license is not written.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# Header-only libraries compiled into the binaries, from Debian: (package, what).
DEBIAN_HEADER_ONLY = [
    ("libcli11-dev", "CLI11 (the CLI's argument parser), compiled into onnxdbg/bin/onnxdbg"),
    ("nlohmann-json3-dev", "nlohmann-json, compiled into the extension, the CLI and the worker"),
]


def fetched_components(root: Path) -> list[tuple[str, str, list[Path]]]:
    """(directory name, what, license files) of the components install-deps.sh fetched."""
    tp = root / "third_party"
    pybind = sorted(tp.glob("pybind11/pybind11-*.dist-info/licenses/*"))
    return [
        ("onnxruntime", "ONNX Runtime's CPU library, onnxdbg/lib/libonnxruntime.so.1",
         [tp / "onnxruntime" / "LICENSE", tp / "onnxruntime" / "ThirdPartyNotices.txt"]),
        ("onnx", "ONNX's C++ library (checker, shape inference, op schemas), compiled in",
         [tp / "onnx" / "LICENSE"]),
        ("pybind11", "pybind11, compiled into onnxdbg/_core", pybind),
        ("dagre", "dagre (the viewer's graph layout), embedded in the HTML pages onnxdbg writes",
         [tp / "dagre" / "package" / "LICENSE"]),
    ]


def original_name(grafted: str) -> str:
    """The library's name before auditwheel added its hash: libzip-5c554ca2.so.4.0 -> libzip.so.4.0."""
    return re.sub(r"-[0-9a-f]{8}(?=\.)", "", grafted, count=1)


def source_package(package: str) -> str:
    """The Debian source package `package` was built from (libquadmath0 -> gcc-12)."""
    out = subprocess.run(["dpkg-query", "-W", "-f", "${source:Package}", package],
                         capture_output=True, text=True)
    return out.stdout.strip() or package


def debian_package(library: str) -> str | None:
    """The Debian package that installed `library` (a file name), or None."""
    out = subprocess.run(["dpkg", "-S", f"*/{library}"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    packages = sorted({line.split(":", 1)[0] for line in out.stdout.splitlines() if ":" in line})
    return packages[0] if packages else None


def record_line(name: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def collect(names: list[str], root: Path) -> tuple[dict[str, bytes], list[str]]:
    """The license files to add (path in licenses/ -> bytes) and THIRD_PARTY.txt's lines."""
    files: dict[str, bytes] = {}
    lines: list[str] = []

    def debian(package: str, what: str) -> None:
        # One file per source package (the OpenCV libraries, or libgfortran and libquadmath from
        # gcc-12, share one copyright text).
        copyright_file = Path("/usr/share/doc") / package / "copyright"
        if not copyright_file.is_file():
            sys.exit(f"wheel_licenses: {copyright_file} is missing ({what})")
        name = f"debian/{source_package(package)}.copyright"
        files[name] = copyright_file.read_bytes()
        lines.append(f"{what}: Debian package {package}; license: {name}")

    for name in names:
        if name.startswith("onnxdbg.libs/") and not name.endswith("/"):
            grafted = name.rsplit("/", 1)[1]
            package = debian_package(original_name(grafted))
            if package is None:
                sys.exit(f"wheel_licenses: no Debian package installed {original_name(grafted)} "
                         f"(grafted as {name}); its license cannot be shipped")
            debian(package, name)
    for package, what in DEBIAN_HEADER_ONLY:
        debian(package, what)
    for folder, what, licenses in fetched_components(root):
        if not licenses or not all(p.is_file() for p in licenses):
            sys.exit(f"wheel_licenses: the license of {folder} is missing under third_party/ "
                     f"(run scripts/install-deps.sh)")
        for p in licenses:
            files[f"{folder}/{p.name}"] = p.read_bytes()
        lines.append(f"{what}; license: " + ", ".join(f"{folder}/{p.name}" for p in licenses))
    return files, lines


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    wheel, root = Path(sys.argv[1]), Path(sys.argv[2])
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        dist_info = next(n.split("/", 1)[0] for n in names
                         if n.split("/", 1)[0].endswith(".dist-info"))
        files, lines = collect(names, root)
        header = ("Third-party code in this wheel and where its license is, relative to this "
                  "folder (scripts/wheel_licenses.py).\n\n")
        files["THIRD_PARTY.txt"] = (header + "\n".join(sorted(set(lines))) + "\n").encode()
        added = {f"{dist_info}/licenses/{k}": v for k, v in files.items()}
        record_name = f"{dist_info}/RECORD"
        fd, tmp = tempfile.mkstemp(dir=wheel.parent, suffix=".whl.tmp")
        os.close(fd)
        try:
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
                for info in z.infolist():
                    if info.filename == record_name or info.filename in added:
                        continue
                    data = z.read(info)
                    out.writestr(info, data)
                for name, data in sorted(added.items()):
                    out.writestr(name, data)
                record = [row for row in csv.reader(io.StringIO(z.read(record_name).decode()))
                          if row and row[0] not in added and row[0] != record_name]
                record += [record_line(n, d) for n, d in sorted(added.items())]
                record.append([record_name, "", ""])
                text = io.StringIO()
                csv.writer(text, lineterminator="\n").writerows(record)
                out.writestr(record_name, text.getvalue())
            os.replace(tmp, wheel)
        except BaseException:
            os.unlink(tmp)
            raise
    print(f"wheel: {len(files)} license files of {len(set(lines))} third-party components in "
          f"{dist_info}/licenses/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
