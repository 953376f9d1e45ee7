"""mnemod_build - a PEP 517/660 build backend for this one pure-Python package.

Standard library only, so pip can build the package without downloading a backend (the
machines mnemod runs on are often offline). It knows exactly this layout: the package
directory ``mnemod/`` next to ``pyproject.toml``, whose ``[project]`` table gives the name,
version, summary, readme and Python requirement as plain strings.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "mnemod"


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not table:
        raise RuntimeError("pyproject.toml: no [project] table")
    meta = dict(re.findall(r'^([A-Za-z-]+)\s*=\s*"([^"]*)"\s*$', table.group(1), re.M))
    for key in ("name", "version"):
        if key not in meta:
            raise RuntimeError("pyproject.toml: [project] %s missing" % key)
    return meta


def _metadata(meta):
    lines = ["Metadata-Version: 2.1", "Name: " + meta["name"], "Version: " + meta["version"]]
    if "description" in meta:
        lines.append("Summary: " + meta["description"])
    if "requires-python" in meta:
        lines.append("Requires-Python: " + meta["requires-python"])
    if "license" in meta:
        lines.append("License: " + meta["license"])
    body = ""
    readme = meta.get("readme")
    if readme and os.path.exists(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return ("\n".join(lines) + "\n" + body).encode("utf-8")


def _dist_info(meta):
    return "%s-%s.dist-info" % (meta["name"], meta["version"])


def _package_files():
    base = os.path.join(ROOT, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".typed")):
                full = os.path.join(dirpath, name)
                yield full, os.path.relpath(full, ROOT).replace(os.sep, "/")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(wheel_directory, entries):
    meta = _project()
    info = _dist_info(meta)
    entries = list(entries) + [
        (info + "/METADATA", _metadata(meta)),
        (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: mnemod_build\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = [_record_line(p, d) for p, d in entries] + [info + "/RECORD,,"]
    entries.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    name = "%s-%s-py3-none-any.whl" % (meta["name"], meta["version"])
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in entries:
            zi = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    meta = _project()
    info = _dist_info(meta)
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "wb") as f:
        f.write(_metadata(meta))
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(rel, _read(full)) for full, rel in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth line puts this source tree on sys.path: edits take effect without reinstalling.
    return _write_wheel(wheel_directory, [("mnemod_editable.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    meta = _project()
    base = "%s-%s" % (meta["name"], meta["version"])
    name = base + ".tar.gz"
    files = [(full, rel) for full, rel in _package_files()]
    for extra in ("pyproject.toml", "README.md", "_build/mnemod_build.py"):
        if os.path.exists(os.path.join(ROOT, extra)):
            files.append((os.path.join(ROOT, extra), extra))
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        def add(rel, data):
            ti = tarfile.TarInfo(base + "/" + rel)
            ti.size = len(data)
            ti.mtime = int(time.time())
            ti.mode = 0o644
            tar.addfile(ti, io.BytesIO(data))
        for full, rel in files:
            add(rel, _read(full))
        add("PKG-INFO", _metadata(meta))
    return name
