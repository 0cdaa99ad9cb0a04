"""Prints the oldest Python this project supports (3.11 or newer) that the machine has.

CI runs the suite on it, so a standard-library feature that arrived in a later patch
release (tarfile's `filter=` came in 3.11.4; Debian 12 ships 3.11.2) fails in CI before
it fails for a user. Looks at every `python3.N` and `python3` on PATH and in the usual
system folders; an interpreter that does not start (a pyenv shim for a version that is
not selected) is skipped. Prints nothing and exits 1 when none is found.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

OLDEST = (3, 11)
SYSTEM = ["/usr/bin", "/usr/local/bin"]


def candidates(path: str) -> list[Path]:
    found: dict[Path, None] = {}
    for folder in [*path.split(os.pathsep), *SYSTEM]:
        for exe in sorted(Path(folder).glob("python3*")) if folder and Path(folder).is_dir() else []:
            name = exe.name.removeprefix("python3")
            if (name == "" or (name.startswith(".") and name[1:].isdigit())) and os.access(exe, os.X_OK):
                found[exe] = None
    return list(found)


def version(exe: Path) -> tuple[int, int, int] | None:
    try:
        run = subprocess.run([str(exe), "-c", "import sys; print(*sys.version_info[:3])"],
                             capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = run.stdout.split()
    if run.returncode != 0 or len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    major, minor, micro = (int(p) for p in parts)
    return major, minor, micro


def oldest(path: str) -> Path | None:
    versions = [(v, exe) for exe in candidates(path) if (v := version(exe)) is not None and v[:2] >= OLDEST]
    return min(versions)[1] if versions else None


if __name__ == "__main__":
    exe = oldest(os.environ.get("PATH", ""))
    if exe is None:
        sys.exit(1)
    print(exe)
