"""The four wheels say what the workspace says: names, versions, dependencies and their ranges.

The wheels are built with `uv build` (as .ci/packages and a release would), then their METADATA
and file lists are compared with each package's pyproject.toml and CHANGELOG.md.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {p.name: p for p in sorted((ROOT / "packages").iterdir()) if p.is_dir()}


def _pyproject(path: Path) -> dict:
    return tomllib.loads((path / "pyproject.toml").read_text())["project"]


WORKSPACE_VERSIONS = {
    canonicalize_name(_pyproject(p)["name"]): Version(_pyproject(p)["version"])
    for p in PACKAGES.values()
}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, zipfile.ZipFile]:
    # `uv run` names its own binary in UV; else uv on PATH. CI always has it: no silent skip.
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        message = "needs uv to build the wheels (python3 -m pip install uv)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [uv, "build", "--quiet", "--all-packages", "--wheel", "--out-dir", str(out)],
        cwd=ROOT,
        check=True,
    )
    found = {}
    for whl in out.glob("*.whl"):
        name = canonicalize_name(whl.name.split("-")[0])
        found[name] = zipfile.ZipFile(whl)
    return found


def _metadata(wheel: zipfile.ZipFile):
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    return Parser().parsestr(wheel.read(name).decode())


def _requirements(project: dict) -> set[str]:
    reqs = {str(Requirement(r)) for r in project.get("dependencies", [])}
    for extra, items in project.get("optional-dependencies", {}).items():
        for item in items:
            req = Requirement(item)
            marker = f'extra == "{extra}"'
            if req.marker is not None:
                marker = f"({req.marker}) and {marker}"
            req.marker = None
            reqs.add(str(Requirement(f"{req}; {marker}")))
    return reqs


def test_there_is_one_wheel_per_workspace_package_with_its_name_and_version(wheels):
    assert set(wheels) == set(WORKSPACE_VERSIONS)
    for path in PACKAGES.values():
        project = _pyproject(path)
        meta = _metadata(wheels[canonicalize_name(project["name"])])
        assert meta["Name"] == project["name"]
        assert Version(meta["Version"]) == Version(project["version"])
        assert meta["Requires-Python"].replace(" ", "") == project["requires-python"]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_a_wheel_requires_exactly_what_its_pyproject_declares(wheels, package):
    project = _pyproject(PACKAGES[package])
    meta = _metadata(wheels[canonicalize_name(project["name"])])
    declared = {str(Requirement(r)) for r in meta.get_all("Requires-Dist") or []}
    assert declared == _requirements(project)
    extras = set(meta.get_all("Provides-Extra") or [])
    assert extras == set(project.get("optional-dependencies", {}))


def _internal_requirements(project: dict) -> list[Requirement]:
    everything = list(project.get("dependencies", []))
    for items in project.get("optional-dependencies", {}).values():
        everything += items
    reqs = [Requirement(r) for r in everything]
    return [r for r in reqs if canonicalize_name(r.name) in WORKSPACE_VERSIONS]


@pytest.mark.parametrize("package", [*sorted(PACKAGES), "examples/downstream"])
def test_dependencies_between_our_packages_are_ranges_the_workspace_versions_satisfy(package):
    path = PACKAGES.get(package, ROOT / package)
    internal = _internal_requirements(_pyproject(path))
    if package in ("mjlab-rl", "rlightning-policy", "examples/downstream"):
        assert internal, f"{package} should depend on another package of ours"
    for req in internal:
        specs = {s.operator for s in req.specifier}
        assert ">=" in specs and "<" in specs, (
            f"{package}: '{req}' needs a lower and an upper bound (e.g. >=0.1,<0.2)"
        )
        version = WORKSPACE_VERSIONS[canonicalize_name(req.name)]
        assert version in req.specifier, f"{package}: '{req}' excludes the workspace's {version}"
        # A compatible range: the next release that may break (next minor before 1.0, else the
        # next major) is excluded.
        breaking = (
            Version(f"0.{version.minor + 1}.0")
            if version.major == 0
            else Version(f"{version.major + 1}.0.0")
        )
        assert breaking not in req.specifier, f"{package}: '{req}' admits {breaking}"


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_a_wheel_ships_its_modules_scripts_and_data_but_no_namespace_init(wheels, package):
    path = PACKAGES[package]
    project = _pyproject(path)
    wheel = wheels[canonicalize_name(project["name"])]
    names = wheel.namelist()
    for namespace in ("mjlab", "rlightning"):
        assert f"{namespace}/__init__.py" not in names
    # Every file of the source tree's modules is in the wheel (Python files and data alike).
    src = path / "src"
    modules = tomllib.loads((path / "pyproject.toml").read_text())["tool"]["uv"]["build-backend"][
        "module-name"
    ]
    for module in modules:
        folder = src / module.replace(".", "/")
        assert (folder / "__init__.py").is_file(), f"{package}: module-name {module} has no folder"
        for file in folder.rglob("*"):
            if file.is_file() and "__pycache__" not in file.parts:
                assert file.relative_to(src).as_posix() in names
    scripts = project.get("scripts", {})
    if scripts:
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        text = wheel.read(entry_points).decode()
        for script, target in scripts.items():
            assert f"{script} = {target}" in text


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_changelog_starts_at_the_package_version(package):
    path = PACKAGES[package]
    heading = re.search(r"^## (\S+)", (path / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert heading, f"{package}/CHANGELOG.md has no '## <version>' heading"
    assert Version(heading.group(1)) == Version(_pyproject(path)["version"])
