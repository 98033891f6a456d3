#!/usr/bin/env python3
"""The project's one list of Python packages: pyproject.toml names them (its dependencies and
extras), python/constraints.txt pins every version. Standard library only.

    python/deps.py requirements [EXTRA ...]   the requirement lines of the extras (default: all),
                                              self-references (theodosian[x]) resolved
    python/deps.py check                      every third-party import under python/, examples/,
                                              bench/ and scripts/ is provided by a listed
                                              package (OPTIONAL imports aside), and every
                                              listed package is pinned
    python/deps.py lock                       rewrites python/constraints.txt: the newest versions
                                              the registry serves of everything listed and what it
                                              pulls in, resolved in a new virtual environment

The check maps an import to its distribution through the installed packages' metadata
(sklearn -> scikit-learn) and a table of the usual aliases, else by name: an import nobody
listed fails whether or not it happens to be installed here.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
CONSTRAINTS = ROOT / "python" / "constraints.txt"
SCANNED = ("python", "examples", "bench", "scripts")
FIRST_PARTY = {"theodosian"}
# Import names whose distribution has another name, for packages that are not installed here.
ALIASES = {
    "sklearn": "scikit-learn",
    "skbuild": "scikit-build",
    "scikit_build_core": "scikit-build-core",
    "yaml": "PyYAML",
    "PIL": "pillow",
    "cv2": "opencv-python",
    "google": "protobuf",
    "dateutil": "python-dateutil",
    "mpl_toolkits": "matplotlib",
    "_pytest": "pytest",
    "pkg_resources": "setuptools",
}


# Imports that are used only when the package happens to be installed (guarded by an ImportError
# with a way around it) and that no extra installs: name -> why.
OPTIONAL = {
    "torch": "theodosian.convert reads .pt state_dicts with it when installed; .npz needs nothing "
             "(PyTorch is too large to install for the tests)",
}


def normalize(name: str) -> str:
    """PEP 503 name: lower case, runs of -_. as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> tuple[str, list[str]]:
    """(normalized name, extras) of a PEP 508 requirement string."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[([^\]]*)\])?", req)
    if not m:
        raise SystemExit(f"deps: cannot read the requirement {req!r} in pyproject.toml")
    extras = [e.strip() for e in (m.group(3) or "").split(",") if e.strip()]
    return normalize(m.group(1)), extras


def load_pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        raise SystemExit("deps: needs Python >= 3.11 (tomllib) to read pyproject.toml")
    with open(PYPROJECT, "rb") as f:
        return tomllib.load(f)


def requirements(extras: list[str] | None = None) -> list[str]:
    """The base dependencies plus the given extras (all when None), self-references expanded."""
    data = load_pyproject()
    project = data["project"]
    own = normalize(project["name"])
    table = project.get("optional-dependencies", {})
    todo = list(table) if extras is None else list(extras)
    seen: set[str] = set()
    out = list(project.get("dependencies", []))
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        if extra not in table:
            raise SystemExit(f"deps: pyproject.toml has no extra {extra!r} (has: {', '.join(table)})")
        seen.add(extra)
        for req in table[extra]:
            name, sub = requirement_name(req)
            if name == own:
                todo.extend(sub)
            elif req not in out:
                out.append(req)
    return out


def listed_names() -> set[str]:
    data = load_pyproject()
    names = {requirement_name(r)[0] for r in requirements()}
    names |= {requirement_name(r)[0] for r in data.get("build-system", {}).get("requires", [])}
    return names


def pins() -> dict[str, str]:
    """name -> exact version of python/constraints.txt."""
    out = {}
    for n, line in enumerate(CONSTRAINTS.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)", line)
        if not m:
            raise SystemExit(f"{CONSTRAINTS.relative_to(ROOT)}:{n}: not 'name==version': {line!r}")
        out[normalize(m.group(1))] = m.group(2)
    return out


def python_files() -> list[Path]:
    files = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            if path.suffix == ".py":
                files.append(path)
            elif path.suffix == "":
                first = path.read_bytes().split(b"\n", 1)[0]
                if first.startswith(b"#!") and b"python" in first:
                    files.append(path)
    return files


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every absolute import in the file, wherever it stands."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def distribution_of(module: str, installed: dict[str, list[str]]) -> str:
    if module in installed:
        return installed[module][0]
    return ALIASES.get(module, module)


def check() -> int:
    from importlib.metadata import packages_distributions

    installed = packages_distributions()
    listed = listed_names()
    pinned = pins()
    errors = []
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path in python_files():
        rel = path.relative_to(ROOT)
        local = {p.stem for p in path.parent.glob("*.py")} | {
            p.name for p in path.parent.iterdir() if (p / "__init__.py").exists()}
        for line, module in imports(path):
            if module in stdlib or module in FIRST_PARTY or module in local or module in OPTIONAL:
                continue
            dist = distribution_of(module, installed)
            if normalize(dist) not in listed:
                errors.append(f"{rel}:{line}: imports '{module}' (package '{dist}'), which "
                              f"pyproject.toml does not list: add it to an extra and pin it "
                              f"in python/constraints.txt")
    for name in sorted(listed):
        if name not in pinned:
            errors.append(f"pyproject.toml lists '{name}' but python/constraints.txt does not "
                          f"pin it (name==version)")
    for e in errors:
        print(f"deps check: {e}")
    if errors:
        print(f"deps check: FAILED ({len(errors)} problem(s))")
        return 1
    print(f"deps check: OK ({len(python_files())} files; {len(listed)} packages listed, "
          f"all pinned)")
    return 0


def lock() -> int:
    """A new virtual environment, the newest versions of everything listed, pip freeze."""
    with tempfile.TemporaryDirectory(prefix="theo-lock-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = str(venv / "bin" / "python")
        build = load_pyproject().get("build-system", {}).get("requires", [])
        subprocess.run([py, "-m", "pip", "install", "--quiet", *requirements(), *build],
                       check=True)
        frozen = subprocess.run([py, "-m", "pip", "freeze", "--all"], check=True,
                                capture_output=True, text=True).stdout.splitlines()
    keep = [line for line in frozen
            if "==" in line and normalize(line.split("==")[0]) not in ("pip", "setuptools")]
    header = [
        "# Exact versions of every Python package the project installs (tests, examples, server,",
        "# plots, development builds) and of what they pull in. pyproject.toml's extras name the",
        "# packages; this file is the one place to bump a version. Regenerate with",
        "# `python/deps.py lock` (newest versions, Python " +
        f"{sys.version_info.major}.{sys.version_info.minor}, Linux x86_64), then run scripts/test.",
    ]
    CONSTRAINTS.write_text("\n".join(header + sorted(keep, key=lambda line: normalize(line.split("==")[0]))) + "\n")
    print(f"deps lock: {len(keep)} pins written to {CONSTRAINTS.relative_to(ROOT)}")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "requirements":
        print("\n".join(requirements(rest or None)))
        return 0
    if cmd == "check":
        return check()
    if cmd == "lock":
        return lock()
    print(f"deps: unknown command {cmd!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
