"""The chapter's slider: depth × published rule, from the frontier's runs on the static page, live in a kernel."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import claims, figures
from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.chapters.depth_rules.experiments import RuleRuns
from deepnotes.core.config import Budget
from deepnotes.core.rules import PUBLISHED
from deepnotes.show import widgets as ui


def sliders(budget: Budget, runs: RuleRuns | None = None) -> dict[str, ui.Slider]:
    """ "runs": the frontier's runs of one rule at one depth; ``runs`` (of :func:`.experiments.train_runs`) serve
    the grid, without them every setting trains live."""
    sub = sizes(budget)
    rules = tuple(PUBLISHED)

    def live():
        return {"depth": ui.int_slider("depth", sub.live_depth), "rule": ui.dropdown("rule", rules)}

    grid = {"depth": sub.frontier_depths, "rule": rules}
    return {
        "runs": ui.Slider("One rule at one depth", figures.slider_figure, grid, live, {"budget": budget, "runs": runs})
    }


def rule_form(budget: Budget, progress: bool = True):
    """The reader's form (a live kernel): placement, α, branch (and whether it learns), β and the matrices it
    scales, the rate scale, the depths; Run prints the estimate, then derives and trains the rule beside DeepNorm
    (:func:`.reader.try_rule`). A refused field is said in words, nothing runs."""
    import ipywidgets as w
    from IPython.display import Markdown, display

    from deepnotes.chapters.depth_rules import reader
    from deepnotes.core.ensembles import RunContext
    from deepnotes.core.rules import PLACEMENTS
    from deepnotes.show.png import show_figures

    start = {**FORM_START, "depths": ", ".join(map(str, sizes(budget).frontier_depths[:3]))}
    text = {k: w.Text(value=v, description=k) for k, v in start.items()}
    placement = w.Dropdown(options=PLACEMENTS, value="pre", description="placement")
    learnable = w.Checkbox(value=False, description="branch learns")
    beta_on = w.Dropdown(options=list(BETA_ON), value="in, out", description="β on")
    run, out = w.Button(description="Run"), w.Output()
    context = RunContext.here(budget, progress=progress)  # the form is an entry point, as a slider is

    def on_run(_=None):
        out.clear_output()
        with out:
            try:
                rule = reader.typed_rule(
                    placement.value,
                    text["alpha"].value,
                    text["branch"].value,
                    text["beta"].value,
                    BETA_ON[beta_on.value],
                    {"sgd": text["lr_scale (SGD)"].value, "adam": text["lr_scale (Adam)"].value},
                    learnable.value,
                )
                depths = reader.trial_depths(rule, reader.typed_depths(text["depths"].value), budget)
                print(reader.trial_estimate(rule, depths, budget))
                tried = reader.try_rule(rule, depths, context)
            except ValueError as err:
                print(f"Not run: {err}")
                return
            display(Markdown(reader.trial_markdown(tried)))
            figures.trial(tried, claims.TRAINED)
            show_figures()

    run.on_click(on_run)
    rates = [text["lr_scale (SGD)"], text["lr_scale (Adam)"]]
    fields = [placement, text["alpha"], text["branch"], learnable, text["beta"], beta_on, *rates]
    box = w.VBox([*fields, text["depths"], run, out])
    box.run = on_run  # the tests press Run without a browser
    return box


# Depth-µP, as typed: its 1/√N branch, and its rate scaled for Adam only
FORM_START = {"alpha": "1", "branch": "1/sqrt(N)", "beta": "1", "lr_scale (SGD)": "1", "lr_scale (Adam)": "1/sqrt(N)"}
BETA_ON = {"in, out": ("in", "out"), "out": ("out",), "in": ("in",)}
