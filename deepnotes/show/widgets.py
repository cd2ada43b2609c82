"""Sliders that work without a kernel (precomputed grid) and with one (live runs off the grid).

:func:`slider_control` renders ``render(**setting)`` (a function returning a matplotlib Figure) at
every setting of a small grid, stores each as a PNG in an ``ipywidgets.Image``, and nests them in
``ipywidgets.Stack``s, one nesting level per slider. Each slider's ``index`` is tied to the
``selected_index`` of every Stack at its level with ``jslink``, which lives in the saved widget
state: in the static HTML book the browser switches images by itself. Several sliders thus map to
one image without any Python callback.

In a live kernel a second panel takes any value (not just grid points), runs ``render`` there with a
progress bar, and caches the figure per setting so that going back is instant.

ipywidgets 7 (Colab's runtime ships 7.7.1) has no ``Stack``: there the grid is one ``Image`` whose PNG
the sliders swap from Python (a kernel is running wherever ipywidgets 7 is, so nothing is lost; the
static book is always built with ipywidgets 8).
"""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import ipywidgets as W
import matplotlib.pyplot as plt

from deepnotes.core.validate import Count, Positive
from deepnotes.show.cache import LIVE_RESULTS_KEPT, LRU
from deepnotes.show.png import figure_png

HAS_STACK = hasattr(W, "Stack")  # ipywidgets ≥ 8
LIVE_NOTE = (
    "<small>Off-grid settings: runs the experiment live. Needs a running kernel "
    "(Jupyter, Colab, Binder); inactive in the static HTML book, whose sliders above "
    "switch between precomputed results.</small>"
)


def wrapping_row() -> W.Layout:
    """The layout of a row of sliders (and the Run button): it wraps onto more lines on a narrow page."""
    return W.Layout(flex_flow="row wrap")


def _grid_swap(render, names, grid, fixed, dpi, sliders) -> W.Image:
    """ipywidgets 7: one Image holding the PNG of the sliders' setting, swapped by a Python callback."""
    pngs = {
        combo: figure_png(render(**fixed, **dict(zip(names, combo, strict=True))), dpi=dpi)
        for combo in itertools.product(*(grid[name] for name in names))
    }
    image = W.Image(value=next(iter(pngs.values())), format="png")

    def swap(_=None):
        image.value = pngs[tuple(slider.value for slider in sliders)]

    for slider in sliders:
        slider.observe(swap, names="value")
    return image


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


READOUT_CH = 9  # characters the slider's readout shows in its own width (72 px in ipywidgets 8's style)
READOUT_CH_MAX = 24  # the widest readout deepnotes.css has a class for


def readout_class(values: Sequence) -> str:
    """The CSS class (deepnotes.css) that fixes a slider's readout at the width of its longest value, or "" where
    the readout's own width holds every value: a readout that grew with its value would shrink the track under
    the reader's finger (initialization's "act" slider: its 184 px track fell to 145 px at "sigmoid_rescaled" in
    the browser test on 36ff7f8's cpu build)."""
    longest = max(len(str(v)) for v in values)
    return f"deepnotes-readout-{min(longest, READOUT_CH_MAX)}" if longest > READOUT_CH else ""


def check_grid(grid) -> None:
    """A slider grid is a non-empty mapping of names to non-empty lists or tuples of values (a string is
    not a list of its characters, a scalar is not a list of one)."""
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError(f"a slider grid must be a non-empty mapping of name to values, got {grid!r}")
    for name, values in grid.items():
        if not isinstance(values, (list, tuple)):
            raise ValueError(f"grid entry {name!r} must be a list or tuple of values, got {values!r}")
        if len(values) == 0:
            raise ValueError(f"grid entry {name!r} has no values")


def slider_control(
    render: Callable[..., object],
    grid: Mapping[str, Sequence],
    live: Mapping[str, W.ValueWidget] | None = None,
    fixed: Mapping | None = None,
    dpi: Count = 80,
    title: str = "",
) -> W.VBox:
    """A control over ``render`` that works in the static book (grid) and in a live kernel (``live``).

    grid:  slider name → the values precomputed at build time (every combination is rendered).
    live:  slider name → a widget taking any value, used by the live panel; None = no live panel.
    fixed: keyword arguments passed to every call of ``render``.
    """
    check_grid(grid)
    names = list(grid)
    fixed = dict(fixed or {})
    sliders = [
        W.SelectionSlider(
            options=[(str(v), v) for v in grid[name]],
            description=name,
            continuous_update=True,
            style={"description_width": "initial"},
        )
        for name in names
    ]
    for slider, name in zip(sliders, names, strict=True):
        readout = readout_class(grid[name])
        if readout:
            slider.add_class(readout)
    if HAS_STACK:
        shown, per_level = _grid_stack(render, names, grid, fixed, 0, dpi)
        links = [
            W.jslink((slider, "index"), (s, "selected_index"))
            for slider, stacks in zip(sliders, per_level, strict=True)
            for s in stacks
        ]
    else:
        shown, links = _grid_swap(render, names, grid, fixed, dpi, sliders), []
    parts = ([W.HTML(f"<b>{title}</b>")] if title else []) + [W.HBox(sliders, layout=wrapping_row()), shown]
    if live:
        parts.append(live_panel(render, live, fixed))
    control = W.VBox(parts)
    control.links = links  # the browser-side links, kept for inspection
    return control


def error_line(err: Exception) -> str:
    """One line for the reader: the error's type and the first line of its message."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {first}" if first else type(err).__name__


def live_panel(
    render: Callable[..., object],
    controls: Mapping[str, W.ValueWidget],
    fixed: Mapping | None = None,
    cache_size: Count = LIVE_RESULTS_KEPT,
) -> W.VBox:
    """Widgets for any value, a Run button, and an Output that shows ``render(..., progress=True)``.

    Figures are cached per setting (the last ``cache_size``): running a setting again shows the stored
    image at once. A live control overrides a ``fixed`` keyword of the same name. If ``render`` raises,
    the figure's place shows one line naming the error instead, and nothing of the previous setting.
    """
    fixed = dict(fixed or {})
    cache = LRU(cache_size)
    out = W.Output()
    button = W.Button(description="Run live", icon="play")
    image = W.Image(format="png", layout=W.Layout(display="none"))  # shown once it has a result
    message = W.HTML(layout=W.Layout(display="none"))  # shown in the image's place on error

    def show(png: bytes | None, error: str = "") -> None:
        message.value = f"<span class='deepnotes-live-error'>{html.escape(error)}</span>" if error else ""
        message.layout.display = None if error else "none"
        if png is not None:
            image.value = png
        image.layout.display = "none" if png is None else None

    def run(_=None):
        setting = {name: w.value for name, w in controls.items()}
        key = tuple(sorted(setting.items()))
        png = cache.get(key)
        if png is None:
            out.clear_output()
            show(None)
            failure = None
            with out:  # the try is inside: in a kernel, Output swallows an exception into a traceback
                try:
                    png = figure_png(render(**{**fixed, **setting}, progress=True))
                except Exception as err:  # noqa: BLE001  (a live run's failure is shown, never raised)
                    failure = err
            if failure is not None:
                plt.close("all")
                out.clear_output()
                show(None, f"This setting did not run: {error_line(failure)}")
                return
            cache.put(key, png)
        show(png)

    button.on_click(run)
    panel = W.VBox(
        [W.HTML(LIVE_NOTE), W.HBox(list(controls.values()) + [button], layout=wrapping_row()), out, message, image]
    )
    panel.run, panel.cache, panel.message, panel.image = run, cache, message, image  # for tests
    return panel


# ---- one description of a chapter's slider, and the widgets its live panel is made of -------------


def _span(description: str, span, positive: bool = False) -> tuple:
    """``span`` = (min, start, max) with min ≤ start ≤ max (and min > 0 where ``positive``)."""
    ok = (
        isinstance(span, (tuple, list))
        and len(span) == 3
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in span)
        and span[0] <= span[1] <= span[2]
        and (not positive or span[0] > 0)
    )
    if not ok:
        need = "0 < min <= start <= max" if positive else "min <= start <= max"
        raise ValueError(f"slider {description!r}: span must be (min, start, max) with {need}, got {span!r}")
    return tuple(span)


def int_slider(description: str, span: tuple[int, int, int]) -> W.IntSlider:
    """An integer slider over ``span`` = (min, start, max)."""
    lo, start, hi = _span(description, span)
    return W.IntSlider(value=start, min=lo, max=hi, description=description)


def float_slider(description: str, span: tuple[float, float, float], step: Positive) -> W.FloatSlider:
    """A linear slider over ``span`` = (min, start, max) in steps of ``step`` (> 0)."""
    lo, start, hi = _span(description, span)
    if hi > lo and step > hi - lo:
        raise ValueError(f"step={step:g} is wider than the slider's range {lo:g} to {hi:g}: it offers one value")
    return W.FloatSlider(value=start, min=lo, max=hi, step=step, description=description)


def log_slider(description: str, span: tuple[float, float, float]) -> W.FloatLogSlider:
    """A log-scale slider over ``span`` = (min, start, max), all > 0 (it never offers 0 or less)."""
    lo, start, hi = _span(description, span, positive=True)
    return W.FloatLogSlider(value=start, base=10, min=math.log10(lo), max=math.log10(hi), description=description)


def dropdown(description: str, options: Collection, value=None) -> W.Dropdown:
    """A choice among ``options`` (the first unless ``value`` is given, which must be one of them)."""
    options = tuple(options) if not isinstance(options, str) else ()
    if not options:
        raise ValueError(f"dropdown {description!r} needs a non-empty list of options, got options={options!r}")
    if value is not None and value not in options:
        raise ValueError(
            f"dropdown {description!r}: {value!r} is not an option; allowed: " + ", ".join(map(repr, options))
        )
    return W.Dropdown(options=options, value=options[0] if value is None else value, description=description)


def checkbox(description: str, value: bool = False) -> W.Checkbox:
    return W.Checkbox(value=value, description=description)


def offered_values(widget: W.ValueWidget) -> tuple:
    """What a live widget lets a reader pick, at its extremes: every option of a Dropdown, both
    states of a Checkbox, the two ends of a slider."""
    if isinstance(widget, W.Dropdown):
        return (
            tuple(value for _, value in widget.options)
            if widget.options and isinstance(widget.options[0], tuple)
            else tuple(widget.options)
        )
    if isinstance(widget, W.Checkbox):
        return (False, True)
    if isinstance(widget, W.FloatLogSlider):
        return (widget.base**widget.min, widget.base**widget.max)
    if isinstance(widget, (W.IntSlider, W.FloatSlider)):
        return (widget.min, widget.max)
    raise TypeError(
        f"no offered values for a {type(widget).__name__}; allowed: Dropdown, Checkbox, IntSlider, "
        "FloatSlider, FloatLogSlider"
    )


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
        return slider_control(
            self.render, self.grid, live=self.live() if self.live else None, fixed=self.fixed, title=self.title
        )

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
