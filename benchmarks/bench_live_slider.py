"""Time one live re-run of each chapter's slider experiment, as a reader's kernel would do it.

    python benchmarks/bench_live_slider.py [--budget cpu] [--smoke]

The book promises a live re-run in under 10 s at the cpu budget; this prints the seconds per
setting (first run, then the cached re-show) for the deepest settings the live sliders offer.
"""

from __future__ import annotations

import argparse
import time

import matplotlib

matplotlib.use("Agg")

import ipywidgets as W  # noqa: E402

import deepnotes as dn  # noqa: E402
from deepnotes.chapters.increment_explosion import experiments as inc  # noqa: E402
from deepnotes.chapters.increment_explosion import figures  # noqa: E402
from deepnotes.chapters.increment_explosion.budget import sizes as increment_explosion_sizes
from deepnotes.show.widgets import live_panel  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", default="cpu")
    ap.add_argument("--smoke", action="store_true", help="the tests' check that it runs: smoke, one depth")
    args = ap.parse_args()
    budget = dn.get_budget("smoke" if args.smoke else args.budget)
    settings = [(24, "post", "adam"), (96, "deepnorm", "adam"), (256, "pre", "sgd")]
    steps = increment_explosion_sizes(budget).slider_steps
    print(f"budget {budget.name}: {steps} steps per live run, device {dn.device()}")
    for depth, norm, opt in [(3, "post", "adam")] if args.smoke else settings:
        controls = {
            "depth": W.IntSlider(value=depth, max=256),
            "norm": W.Dropdown(options=inc.VARIANTS, value=norm),
            "optimizer": W.Dropdown(options=["adam", "sgd", "lamb"], value=opt),
        }
        panel = live_panel(figures.slider_figure, controls, fixed={"budget": budget})
        button = [w for w in panel.children[1].children if isinstance(w, W.Button)][0]
        t0 = time.perf_counter()
        button.click()
        t1 = time.perf_counter()
        button.click()
        t2 = time.perf_counter()
        print(
            f"increment explosion, depth {depth:4d}, {norm:9s} {opt}: live run {t1 - t0:6.2f} s, "
            f"cached re-show {1e3 * (t2 - t1):6.1f} ms"
        )


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
