"""The package's own PEP 517 backend (build_backend/mnemos_build.py): the wheel follows PEP 427 (RECORD hashes,
WHEEL, METADATA from pyproject.toml), builds are byte-for-byte reproducible, and the sdist and editable wheel hold
what they must. The Node test clients-python.test.ts builds through pip and installs the result."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import tomllib
import unittest
import zipfile

import helpers  # noqa: F401  (puts the package source on sys.path unless the installed copy is under test)

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(PROJECT, "build_backend"))

import mnemos_build  # noqa: E402


class WheelAndSdist(unittest.TestCase):
    def setUp(self) -> None:
        self.out = tempfile.mkdtemp(prefix="mnemos-build-")
        with open(os.path.join(PROJECT, "pyproject.toml"), "rb") as handle:
            self.project = tomllib.load(handle)["project"]

    def tearDown(self) -> None:
        shutil.rmtree(self.out)

    def test_wheel_is_pep_427_with_metadata_from_pyproject(self) -> None:
        name = mnemos_build.build_wheel(self.out)
        version = self.project["version"]
        self.assertEqual(name, f"mnemos_client-{version}-py3-none-any.whl")
        dist_info = f"mnemos_client-{version}.dist-info"
        with zipfile.ZipFile(os.path.join(self.out, name)) as wheel:
            names = wheel.namelist()
            self.assertIn("mnemos_client/py.typed", names)
            self.assertIn("mnemos_client/aio.py", names)
            self.assertIn(f"{dist_info}/LICENSE", names)
            self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
            metadata = wheel.read(f"{dist_info}/METADATA").decode()
            self.assertIn("Name: mnemos-client\n", metadata)
            self.assertIn(f"Version: {version}\n", metadata)
            self.assertIn(f"Requires-Python: {self.project['requires-python']}\n", metadata)
            self.assertIn("Classifier: Typing :: Typed\n", metadata)
            self.assertIn("Description-Content-Type: text/markdown", metadata)
            self.assertIn("# mnemos-client", metadata)
            self.assertIn("Tag: py3-none-any", wheel.read(f"{dist_info}/WHEEL").decode())
            record = wheel.read(f"{dist_info}/RECORD").decode().splitlines()
            listed = {}
            for line in record:
                path, digest, size = line.rsplit(",", 2)
                listed[path] = (digest, size)
            self.assertEqual(set(listed), set(names))
            self.assertEqual(listed[f"{dist_info}/RECORD"], ("", ""))
            for path in names:
                if path.endswith("/RECORD"):
                    continue
                data = wheel.read(path)
                expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual(listed[path], (expected, str(len(data))), path)

    def test_builds_are_reproducible(self) -> None:
        first = os.path.join(self.out, "a")
        second = os.path.join(self.out, "b")
        os.mkdir(first)
        os.mkdir(second)
        for folder in (first, second):
            mnemos_build.build_wheel(folder)
            mnemos_build.build_sdist(folder)
        for name in os.listdir(first):
            with open(os.path.join(first, name), "rb") as a, open(os.path.join(second, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)

    def test_sdist_holds_what_a_build_needs(self) -> None:
        name = mnemos_build.build_sdist(self.out)
        base = f"mnemos_client-{self.project['version']}"
        self.assertEqual(name, f"{base}.tar.gz")
        with tarfile.open(os.path.join(self.out, name)) as sdist:
            names = set(sdist.getnames())
        for needed in ("PKG-INFO", "pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE",
                       "build_backend/mnemos_build.py", "src/mnemos_client/__init__.py", "src/mnemos_client/py.typed"):
            self.assertIn(f"{base}/{needed}", names)

    def test_editable_wheel_points_at_the_source(self) -> None:
        name = mnemos_build.build_editable(self.out)
        with zipfile.ZipFile(os.path.join(self.out, name)) as wheel:
            pth = [n for n in wheel.namelist() if n.endswith(".pth")]
            self.assertEqual(len(pth), 1)
            self.assertEqual(wheel.read(pth[0]).decode().strip(), os.path.join(PROJECT, "src"))

    def test_hooks_need_nothing_installed(self) -> None:
        self.assertEqual(mnemos_build.get_requires_for_build_wheel(), [])
        self.assertEqual(mnemos_build.get_requires_for_build_sdist(), [])
        self.assertEqual(mnemos_build.get_requires_for_build_editable(), [])


if __name__ == "__main__":
    unittest.main()
