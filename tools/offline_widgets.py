"""Build the book with local copies of the widget manager and MathJax instead of the CDN ones.

    python tools/offline_widgets.py            # installs it and writes .cache/_config.offline.yml
    jupyter-book build . --config .cache/_config.offline.yml

The HTML book's sliders need ``@jupyter-widgets/html-manager`` in the browser. MyST-NB loads it from
a CDN by default; offline readers and the browser test use a copy installed from the npm registry
at build time (never committed). Only ``dist/embed.js`` and the fonts it loads are copied into a
static folder of their own (not ``_static/``, whose every .js Jupyter Book adds to every page), and
``nb_ipywidgets_js`` points MyST-NB at it, so the script is added to the pages with widgets only.
MathJax 3 (its loader with the TeX input, CommonHTML output, fonts and assistive MathML; not the menu or the
speech engine) comes from the npm registry the same way and replaces Sphinx's CDN ``mathjax_path``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache"
PACKAGE = "@jupyter-widgets/html-manager"
STATIC_NAME = "html-manager"
MATHJAX = "mathjax@3"
# MathJax's loader and the components the book's pages use: TeX in, CommonHTML out, and the hidden MathML a screen
# reader reads. Not the combined tex-chtml.js (1.16 MB): it adds the right-click menu (426 kB), which the pages do
# without (issue 48: page weight). The TeX extensions the loader autoloads on demand come along in input/.
MATHJAX_PARTS = ("startup.js", "core.js", "input", "output/chtml.js", "output/chtml", "a11y")
MATHJAX_LOAD = ["core", "input/tex", "output/chtml", "a11y/assistive-mml"]


def html_manager_version() -> str:
    """The html-manager release that matches the installed ipywidgets (``^1.0.x`` for ipywidgets 8)."""
    from ipywidgets._version import __html_manager_version__

    return __html_manager_version__


def _npm_install(prefix: Path, *packages: str) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the local widget manager and MathJax (apt-get install npm)")
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent", *packages], check=True
    )
    return prefix / "node_modules"


def install_html_manager(cache: Path = CACHE) -> Path:
    """npm-install the html-manager and MathJax into ``cache/npm``; copy the html-manager's embed.js
    + fonts into ``cache/widgets-static/html-manager`` and MathJax's parts into ``.../mathjax``.
    Returns the static folder to add to ``html_static_path``."""
    static = cache / "widgets-static"
    target, mathjax = static / STATIC_NAME, static / "mathjax"
    if (target / "embed.js").exists() and all((mathjax / part).exists() for part in MATHJAX_PARTS):
        return static
    modules = _npm_install(cache / "npm", f"{PACKAGE}@{html_manager_version()}", MATHJAX)
    target.mkdir(parents=True, exist_ok=True)
    for f in (modules / PACKAGE / "dist").iterdir():
        if f.name == "embed.js" or f.suffix in (".woff", ".woff2", ".ttf", ".eot", ".svg"):
            shutil.copy2(f, target / f.name)
    for part in MATHJAX_PARTS:
        src, dst = modules / "mathjax" / "es5" / part, mathjax / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)
    return static


def write_offline_config(static: Path, out: Path, extra: dict | None = None) -> Path:
    """Write a copy of ``_config.yml`` that serves the widget manager from ``static``."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config["html_static_path"] = [str(static.resolve())]
    sphinx_config["nb_ipywidgets_js"] = {f"{STATIC_NAME}/embed.js": {"defer": "defer"}}  # not render-blocking
    sphinx_config["mathjax_path"] = "mathjax/startup.js"
    sphinx_config.setdefault("mathjax3_config", {})["loader"] = {"load": MATHJAX_LOAD}
    for key, value in (extra or {}).items():
        sphinx_config[key] = value
    # jupyter-book resolves local extensions' folders against the config file's folder: point them back here
    local = config["sphinx"].get("local_extensions") or {}
    for name, folder in local.items():
        local[name] = str((ROOT / folder).resolve())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return out


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)  # takes no arguments
    static = install_html_manager()
    out = write_offline_config(static, CACHE / "_config.offline.yml")
    print(f"widget manager: {static / STATIC_NAME / 'embed.js'}")
    print(f"build with:     jupyter-book build . --config {out.relative_to(ROOT)}")


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
