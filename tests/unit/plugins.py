"""A third party's package installed for a test, as pip would leave it on sys.path: the
package's modules and a ``.dist-info`` holding its ``entry_points.txt`` (importlib.metadata
reads every distribution on sys.path), written from the package's own pyproject.toml."""

from __future__ import annotations

import contextlib
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from pgfsbench import extensions


def _dist_info(plugin: Path, where: Path) -> None:
    """The package's installed metadata, as pip would write it."""
    project = tomllib.loads((plugin / "pyproject.toml").read_text())["project"]
    info = where / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, entries in project["entry-points"].items():
        lines += [f"[{group}]", *(f"{name} = {value}" for name, value in entries.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))


@contextlib.contextmanager
def installed(plugin: Path, where: Path) -> Iterator[None]:
    """``plugin`` (a package directory with its pyproject.toml) installed under ``where``
    for the block, then gone."""
    _dist_info(plugin, where)
    saved = list(sys.path)
    sys.path[:0] = [str(where), str(plugin)]
    extensions.refresh()
    try:
        yield
    finally:
        sys.path[:] = saved
        packages = {p.name for p in plugin.iterdir() if (p / "__init__.py").is_file()}
        for name in [m for m in sys.modules if m.split(".")[0] in packages]:
            del sys.modules[name]
        extensions.refresh()
