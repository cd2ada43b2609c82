"""Build the HTML book at a budget with the local widget manager and MathJax, into a folder the browser test can
reuse: the release check of the book at the reader's budget (issue 48).

    python tools/build_book.py --budget cpu --out /tmp/book-cpu            # tens of minutes on a laptop
    DEEPNOTES_REUSE_BUILD=/tmp/book-cpu pytest tests/test_browser.py      # the browser test on that build

CI tests a fresh ``smoke`` build (``tests/conftest.py`` builds it with :func:`build`); the ``cpu`` build is the one
readers get, and its figures, tables and sliders carry the ``cpu`` budget's sizes, so a maintainer runs the two
commands above before a release (``CONTRIBUTING.md``). The folder also holds ``work.jsonl``, every training
ensemble the chapters ran (``DEEPNOTES_WORK_LOG``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import offline_widgets  # noqa: E402

BUILD_TIMEOUT = {"smoke": 1800, "cpu": 6 * 3600, "gpu": 6 * 3600}  # seconds before the build is given up


def build(out: Path, budget: str = "smoke", strict: bool = False) -> tuple[Path, bool, subprocess.CompletedProcess]:
    """``jupyter-book build`` of the book at ``budget`` into ``out`` (warnings are errors), with the local widget
    manager where npm can install it (``strict``: or fail). Returns (the _build/html folder, whether the widget
    manager is the local one, the finished build process)."""
    from deepnotes.core.config import BUDGETS
    from deepnotes.core.validate import choice

    choice("budget", budget, tuple(BUDGETS))
    out.mkdir(parents=True, exist_ok=True)
    args, local = [], False
    try:
        static = offline_widgets.install_html_manager()
        args = ["--config", str(offline_widgets.write_offline_config(static, out / "_config.yml"))]
        local = True
    except (RuntimeError, subprocess.CalledProcessError) as err:
        if strict:
            raise
        warnings.warn(f"building with the CDN widget manager: {err}", stacklevel=2)
    env = dict(os.environ, DEEPNOTES_BUDGET=budget, DEEPNOTES_WORK_LOG=str(out / "work.jsonl"))
    env.pop("MPLBACKEND", None)  # the kernels must use the inline backend to emit figures
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=BUILD_TIMEOUT.get(budget, BUILD_TIMEOUT["cpu"]),
    )
    return out / "_build" / "html", local, proc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="cpu", help="the budget the chapters run at (default: cpu)")
    parser.add_argument("--out", type=Path, required=True, help="the folder to build into (DEEPNOTES_REUSE_BUILD)")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        raise ValueError(f"--out {args.out} is a file, not a folder")
    html, local, proc = build(args.out, args.budget, strict=True)
    if proc.returncode != 0:
        print(proc.stdout[-4000:] + proc.stderr[-4000:], file=sys.stderr)
        raise ValueError(f"{args.out}: the build at {args.budget!r} failed (exit {proc.returncode}), its log above")
    print(f"built {html / 'index.html'} at {args.budget!r}; the browser test on it:")
    print(f"DEEPNOTES_REUSE_BUILD={args.out} pytest tests/test_browser.py")
    return 0


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
