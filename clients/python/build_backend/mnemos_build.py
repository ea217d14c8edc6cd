"""A PEP 517 build backend for this one pure-Python package, in the standard library only, so that the wheel and the
sdist build with no network and no build tools installed (``pip wheel --no-build-isolation``, ``python -m build``).

It reads the ``[project]`` table of pyproject.toml (core metadata 2.1) and packs ``src/<package>`` as a
``py3-none-any`` wheel (PEP 427) or an sdist (PEP 625 name). Archives are reproducible: entries are sorted and dated
``SOURCE_DATE_EPOCH`` (else 1980-01-01), so the same sources give the same bytes."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = "mnemos_build 1.0"
SDIST_FILES = ("pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE")
SDIST_DIRS = ("src", "build_backend", "tests")
_SUPPORTED = {"name", "version", "description", "readme", "requires-python", "license", "dependencies", "keywords",
              "classifiers", "urls", "authors"}


def _load_project() -> Dict[str, Any]:
    try:
        import tomllib
    except ImportError as error:  # Python < 3.11: the wheel on the index serves these; building needs 3.11.
        raise RuntimeError("Building mnemos-client needs Python 3.11 or newer (tomllib); "
                           "install the published wheel on older Pythons.") from error
    with open(ROOT / "pyproject.toml", "rb") as handle:
        project: Dict[str, Any] = tomllib.load(handle)["project"]
    unknown = set(project) - _SUPPORTED
    if unknown or project.get("dynamic"):
        raise RuntimeError(f"pyproject.toml [project] uses fields this backend does not write: "
                           f"{sorted(unknown | set(project.get('dynamic', [])))}; add them to build_backend.")
    return project


def _normalized(name: str) -> str:
    """The distribution name as wheel and sdist file names spell it (PEP 427, PEP 625)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _package_dir(project: Mapping[str, Any]) -> Path:
    package = ROOT / "src" / _normalized(project["name"])
    if not (package / "__init__.py").is_file():
        raise RuntimeError(f"No package at {package}: the import package must be src/{_normalized(project['name'])}.")
    return package


def _metadata(project: Mapping[str, Any]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    for author in project.get("authors", []):
        if "name" in author:
            lines.append(f"Author: {author['name']}")
        if "email" in author:
            lines.append(f"Author-email: {author['email']}")
    license_ = project.get("license")
    if isinstance(license_, dict) and "text" in license_:
        lines.append(f"License: {license_['text']}")
    if project.get("keywords"):
        lines.append(f"Keywords: {','.join(project['keywords'])}")
    lines.extend(f"Classifier: {c}" for c in project.get("classifiers", []))
    lines.extend(f"Project-URL: {label}, {url}" for label, url in project.get("urls", {}).items())
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines.extend(f"Requires-Dist: {d}" for d in project.get("dependencies", []))
    readme = project.get("readme")
    body = ""
    if isinstance(readme, str):
        kind = "text/markdown" if readme.endswith(".md") else "text/plain"
        lines.append(f"Description-Content-Type: {kind}")
        body = (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + body


def _epoch() -> int:
    """SOURCE_DATE_EPOCH, not before 1980-01-01 (the earliest date a zip entry can carry)."""
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _date_time() -> Tuple[int, int, int, int, int, int]:
    year, month, day, hour, minute, second = time.gmtime(_epoch())[:6]
    return year, month, day, hour, minute, second


def _source_files(folder: Path) -> List[Path]:
    return [path for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo")]


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, project: Mapping[str, Any], files: List[Tuple[str, bytes]]) -> str:
    name, version = _normalized(project["name"]), project["version"]
    dist_info = f"{name}-{version}.dist-info"
    wheel_meta = f"Wheel-Version: 1.0\nGenerator: {GENERATOR}\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries = sorted(files) + [
        (f"{dist_info}/METADATA", _metadata(project).encode("utf-8")),
        (f"{dist_info}/WHEEL", wheel_meta.encode("utf-8")),
    ]
    # The licence text travels with the installed package, where wheels have always carried it.
    if (ROOT / "LICENSE").is_file():
        entries.append((f"{dist_info}/LICENSE", (ROOT / "LICENSE").read_bytes()))
    record = "\n".join([_record_line(p, d) for p, d in entries] + [f"{dist_info}/RECORD,,"]) + "\n"
    entries.append((f"{dist_info}/RECORD", record.encode("utf-8")))
    filename = f"{name}-{version}-py3-none-any.whl"
    stamp = _date_time()
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return filename


def _package_files(project: Mapping[str, Any]) -> List[Tuple[str, bytes]]:
    package = _package_dir(project)
    return [(path.relative_to(package.parent).as_posix(), path.read_bytes()) for path in _source_files(package)]


# ---------------------------------------------------------------------- PEP 517 / PEP 660 hooks


def get_requires_for_build_wheel(config_settings: Optional[Mapping[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Mapping[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Mapping[str, Any]] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[Mapping[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    project = _load_project()
    return _write_wheel(wheel_directory, project, _package_files(project))


def build_editable(wheel_directory: str, config_settings: Optional[Mapping[str, Any]] = None,
                   metadata_directory: Optional[str] = None) -> str:
    """A wheel holding only a .pth file that puts ``src`` on the path, so edits take effect without reinstalling."""
    project = _load_project()
    _package_dir(project)
    pth = (str(ROOT / "src") + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, project, [(f"__editable__.{_normalized(project['name'])}.pth", pth)])


def build_sdist(sdist_directory: str, config_settings: Optional[Mapping[str, Any]] = None) -> str:
    project = _load_project()
    base = f"{_normalized(project['name'])}-{project['version']}"
    members: List[Tuple[str, bytes]] = [("PKG-INFO", _metadata(project).encode("utf-8"))]
    members += [(name, (ROOT / name).read_bytes()) for name in SDIST_FILES if (ROOT / name).is_file()]
    for folder in SDIST_DIRS:
        members += [(path.relative_to(ROOT).as_posix(), path.read_bytes()) for path in _source_files(ROOT / folder)]
    filename = f"{base}.tar.gz"
    mtime = _epoch()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path, data in sorted(members):
            info = tarfile.TarInfo(f"{base}/{path}")
            info.size, info.mtime, info.mode = len(data), mtime, 0o644
            archive.addfile(info, io.BytesIO(data))
    with open(Path(sdist_directory) / filename, "wb") as out:
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=mtime) as zipped:
            zipped.write(buffer.getvalue())
    return filename

