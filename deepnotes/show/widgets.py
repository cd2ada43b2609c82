"""Sliders that work without a kernel (precomputed grid) and with one (live runs off the grid).

:func:`slider_control` renders ``render(**setting)`` (a function returning a matplotlib Figure) at
every setting of a small grid, stores each as a PNG in an ``ipywidgets.Image``, and nests them in
``ipywidgets.Stack``s, one nesting level per slider. Each slider's ``index`` is tied to the
``selected_index`` of every Stack at its level with ``jslink``, which lives in the saved widget
state: in the static HTML book the browser switches images by itself. Several sliders thus map to
one image without any Python callback.

In a live kernel a second panel takes any value (not just grid points), runs ``render`` there with a
progress bar, and caches the figure per setting so that going back is instant.
"""
from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import ipywidgets as W
import matplotlib.pyplot as plt

LIVE_NOTE = ("<small>Off-grid settings: runs the experiment live. Needs a running kernel "
             "(Jupyter, Colab, Binder); inactive in the static HTML book, whose sliders above "
             "switch between precomputed results.</small>")


def figure_png(fig, dpi: int = 80) -> bytes:
    """The figure as PNG bytes; the figure is closed so it does not also print as an output."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


def _grid_stack(render, names, grid, fixed, level, dpi):
    """Nested Stacks for the sliders names[level:]; returns (widget, stacks per level)."""
    if level == len(names):
        return W.Image(value=figure_png(render(**fixed), dpi=dpi), format="png"), [[] for _ in names]
    children, per_level = [], [[] for _ in names]
    for value in grid[names[level]]:
        child, below = _grid_stack(render, names, grid, {**fixed, names[level]: value}, level + 1, dpi)
        children.append(child)
        for k in range(level + 1, len(names)):
            per_level[k].extend(below[k])
    stack = W.Stack(children=children, selected_index=0)
    per_level[level].append(stack)
    return stack, per_level


def slider_control(render: Callable[..., object], grid: Mapping[str, Sequence],
                   live: Mapping[str, W.ValueWidget] | None = None, fixed: Mapping | None = None,
                   dpi: int = 80, title: str = "") -> W.VBox:
    """A control over ``render`` that works in the static book (grid) and in a live kernel (``live``).

    grid:  slider name → the values precomputed at build time (every combination is rendered).
    live:  slider name → a widget taking any value, used by the live panel; None = no live panel.
    fixed: keyword arguments passed to every call of ``render``.
    """
    if not grid:
        raise ValueError("slider_control needs a non-empty grid")
    for name, values in grid.items():
        if len(values) == 0:
            raise ValueError(f"grid entry {name!r} has no values")
    names = list(grid)
    fixed = dict(fixed or {})
    stack, per_level = _grid_stack(render, names, grid, fixed, 0, dpi)
    sliders, links = [], []
    for level, name in enumerate(names):
        slider = W.SelectionSlider(options=[(str(v), v) for v in grid[name]], description=name,
                                   continuous_update=True, style={"description_width": "initial"})
        for s in per_level[level]:
            links.append(W.jslink((slider, "index"), (s, "selected_index")))
        sliders.append(slider)
    parts = ([W.HTML(f"<b>{title}</b>")] if title else []) + [W.HBox(sliders), stack]
    if live:
        parts.append(live_panel(render, live, fixed))
    control = W.VBox(parts)
    control.links = links        # the browser-side links, kept for inspection
    return control


def live_panel(render: Callable[..., object], controls: Mapping[str, W.ValueWidget],
               fixed: Mapping | None = None) -> W.VBox:
    """Widgets for any value, a Run button, and an Output that shows ``render(..., progress=True)``.

    Figures are cached per setting: running a setting again shows the stored image at once. A live
    control overrides a ``fixed`` keyword of the same name.
    """
    fixed = dict(fixed or {})
    cache: dict[tuple, bytes] = {}
    out = W.Output()
    button = W.Button(description="Run live", icon="play")
    image = W.Image(format="png", layout=W.Layout(display="none"))   # shown once it has a result

    def run(_=None):
        setting = {name: w.value for name, w in controls.items()}
        key = tuple(sorted(setting.items()))
        if key not in cache:
            out.clear_output()
            with out:
                cache[key] = figure_png(render(**{**fixed, **setting}, progress=True))
        image.value = cache[key]
        image.layout.display = None

    button.on_click(run)
    return W.VBox([W.HTML(LIVE_NOTE), W.HBox(list(controls.values()) + [button]), out, image])


# ---- one description of a chapter's slider, and the widgets its live panel is made of -------------

def int_slider(description: str, span: tuple[int, int, int]) -> W.IntSlider:
    """An integer slider over ``span`` = (min, start, max)."""
    lo, start, hi = span
    return W.IntSlider(value=start, min=lo, max=hi, description=description)


def float_slider(description: str, span: tuple[float, float, float], step: float) -> W.FloatSlider:
    """A linear slider over ``span`` = (min, start, max) in steps of ``step``."""
    lo, start, hi = span
    return W.FloatSlider(value=start, min=lo, max=hi, step=step, description=description)


def log_slider(description: str, span: tuple[float, float, float]) -> W.FloatLogSlider:
    """A log-scale slider over ``span`` = (min, start, max), all > 0 (it never offers 0 or less)."""
    lo, start, hi = span
    return W.FloatLogSlider(value=start, base=10, min=math.log10(lo), max=math.log10(hi), description=description)


def dropdown(description: str, options: Sequence, value=None) -> W.Dropdown:
    """A choice among ``options`` (the first unless ``value`` is given)."""
    options = tuple(options)
    return W.Dropdown(options=options, value=options[0] if value is None else value, description=description)


def checkbox(description: str, value: bool = False) -> W.Checkbox:
    return W.Checkbox(value=value, description=description)


def offered_values(widget: W.ValueWidget) -> tuple:
    """What a live widget lets a reader pick, at its extremes: every option of a Dropdown, both
    states of a Checkbox, the two ends of a slider."""
    if isinstance(widget, W.Dropdown):
        return tuple(value for _, value in widget.options) if widget.options and isinstance(widget.options[0], tuple) \
            else tuple(widget.options)
    if isinstance(widget, W.Checkbox):
        return (False, True)
    if isinstance(widget, W.FloatLogSlider):
        return (widget.base ** widget.min, widget.base ** widget.max)
    if isinstance(widget, (W.IntSlider, W.FloatSlider)):
        return (widget.min, widget.max)
    raise TypeError(f"no offered values for a {type(widget).__name__}; allowed: Dropdown, Checkbox, IntSlider, "
                    "FloatSlider, FloatLogSlider")


@dataclass(frozen=True)
class Slider:
    """A chapter's slider: ``render`` over the precomputed ``grid`` and, in a kernel, over the widgets
    ``live()`` makes (a factory: every :meth:`build` gets widgets of its own)."""
    title: str
    render: Callable[..., object]
    grid: Mapping[str, Sequence]
    live: Callable[[], Mapping[str, W.ValueWidget]] | None = None
    fixed: Mapping = field(default_factory=dict)

    def build(self) -> W.VBox:
        """The control for the page: :func:`slider_control` of this slider."""
        return slider_control(self.render, self.grid, live=self.live() if self.live else None, fixed=self.fixed,
                              title=self.title)

    def live_settings(self) -> Iterator[dict]:
        """Every setting the live panel offers at an extreme: each widget at each of its
        :func:`offered_values`, the others at their start values."""
        if self.live is None:
            return
        widgets = self.live()
        start = {name: w.value for name, w in widgets.items()}
        for name, w in widgets.items():
            for value in offered_values(w):
                yield {**start, name: value}
