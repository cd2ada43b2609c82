"""Build the book with a local copy of the widget manager instead of the CDN one.

    python tools/offline_widgets.py            # installs it and writes .cache/_config.offline.yml
    jupyter-book build . --config .cache/_config.offline.yml

The HTML book's sliders need ``@jupyter-widgets/html-manager`` in the browser. MyST-NB loads it from
a CDN by default; offline readers and the browser test use a copy installed from the npm registry
at build time (never committed). Only ``dist/embed.js`` and the fonts it loads are copied into a
static folder of their own (not ``_static/``, whose every .js Jupyter Book adds to every page), and
``nb_ipywidgets_js`` points MyST-NB at it, so the script is added to the pages with widgets only.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache"
PACKAGE = "@jupyter-widgets/html-manager"
STATIC_NAME = "html-manager"


def html_manager_version() -> str:
    """The html-manager release that matches the installed ipywidgets (``^1.0.x`` for ipywidgets 8)."""
    from ipywidgets._version import __html_manager_version__
    return __html_manager_version__


def install_html_manager(cache: Path = CACHE) -> Path:
    """npm-install the html-manager into ``cache/npm`` and copy embed.js + fonts into
    ``cache/widgets-static/html-manager``. Returns the static folder to add to ``html_static_path``."""
    static = cache / "widgets-static"
    target = static / STATIC_NAME
    if (target / "embed.js").exists():
        return static
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the local widget manager (apt-get install npm)")
    prefix = cache / "npm"
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent",
                    f"{PACKAGE}@{html_manager_version()}"], check=True)
    dist = prefix / "node_modules" / PACKAGE / "dist"
    target.mkdir(parents=True, exist_ok=True)
    for f in dist.iterdir():
        if f.name == "embed.js" or f.suffix in (".woff", ".woff2", ".ttf", ".eot", ".svg"):
            shutil.copy2(f, target / f.name)
    return static


def write_offline_config(static: Path, out: Path, extra: dict | None = None) -> Path:
    """Write a copy of ``_config.yml`` that serves the widget manager from ``static``."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config["html_static_path"] = [str(static.resolve())]
    sphinx_config["nb_ipywidgets_js"] = {f"{STATIC_NAME}/embed.js": {}}
    for key, value in (extra or {}).items():
        sphinx_config[key] = value
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return out


def main() -> None:
    static = install_html_manager()
    out = write_offline_config(static, CACHE / "_config.offline.yml")
    print(f"widget manager: {static / STATIC_NAME / 'embed.js'}")
    print(f"build with:     jupyter-book build . --config {out.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
