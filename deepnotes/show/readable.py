"""What makes a figure of the book readable, as numbers a test can check.

A figure is shown at most as wide as the text column, scaled down to fit: its text on screen is

    text px = font pt · dpi / 72 · min(1, column px / figure px),

so a figure twice the column's width halves its text. The column is 688 CSS px in a 1280 px window and
358 px on a 390 px phone (sphinx-book-theme, measured in Chromium on the built book). The smallest text
must stay ≥ 9 CSS px on the laptop and ≥ 7 px on the phone: with a figure of width ``w`` inches that is
``font pt ≥ 7 · 72 · w / 358`` on the phone, which :data:`FIGURE_WIDTH_IN` and :data:`TEXT_PT` satisfy.

A legend tells its lines apart: two entries never share colour, line style and marker, and a marker never
sits on a dashed line (the short legend sample then shows the marker, not the dash). No text shows TeX
source ("Π(1+v)^{-1/2}" outside ``$…$``), and no curve runs past the edge of its axes unmarked: a plot that
caps a curve draws the capped part on the edge (and says so), it does not let the axes cut it off.
"""

from __future__ import annotations

import re

from deepnotes.core.validate import Count, Positive, choice

_TEX_SOURCE = re.compile(r"\\[A-Za-z]+|[\^_]\{")  # \command, ^{…} or _{…}: TeX that only mathtext renders
_MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$")  # a $…$ span, which matplotlib renders as math
EDGE_PX = 2.0  # a curve point this far past its axes' edge (display px) is cut off by it

COLUMN_PX = {1280: 688, 390: 358}  # window width → the text column's width (CSS px)
MIN_TEXT_PX = {1280: 9.0, 390: 7.0}  # window width → the smallest readable text (CSS px)
FIGURE_WIDTH_IN = 6.0  # two panels side by side fill this; one panel is narrower
TEXT_PT = 9.0  # the smallest font of any figure text: ticks, legends, notes
TITLE_PT = 10.0  # panel titles
PANELS_PER_ROW = 2


def smallest_text_pt(fig, drawn: bool = False) -> float | None:
    """The smallest font size (points) of the figure's drawn, non-empty text; None if it has none.
    ``drawn``: the figure was just drawn (saved), so its tick labels have their text already."""
    from matplotlib.axis import Tick
    from matplotlib.text import Text

    if not drawn:
        fig.draw_without_rendering()  # tick labels get their text, layouts their place
    hidden_ticks = {
        id(t)
        for ax in fig.axes
        if not (ax.get_visible() and ax.axison)
        for tick in ax.findobj(Tick)
        for t in (tick.label1, tick.label2)
    }
    sizes = [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible()
        and t.get_text().strip()
        and id(t) not in hidden_ticks
        and (t.axes is None or t.axes.get_visible())
    ]
    return min(sizes, default=None)


def text_px_on_screen(text_pt: Positive, figure_px: Positive, dpi: Positive, window: Count) -> float:
    """CSS px of text of ``text_pt`` points in a figure ``figure_px`` wide at ``dpi``, shown in a window
    of ``window`` px: text px = pt · dpi / 72 · min(1, column / figure px)."""
    choice("window", window, COLUMN_PX)
    return text_pt * dpi / 72 * min(1.0, COLUMN_PX[window] / figure_px)


def _signature(handle) -> tuple:
    """What a legend sample looks like: colour, line style and marker (faces and hatches for patches)."""
    from matplotlib.colors import to_hex

    def hexed(c):
        try:
            return to_hex(c, keep_alpha=True)
        except (ValueError, TypeError):
            return str(c)

    from matplotlib.collections import LineCollection

    if hasattr(handle, "get_linestyle") and hasattr(handle, "get_marker"):
        ls = handle.get_linestyle() if handle.get_linewidth() > 0 else "None"
        return ("line", hexed(handle.get_color()), ls, str(handle.get_marker()))
    if isinstance(handle, LineCollection):  # an error bar's key
        colours = handle.get_edgecolor()
        return ("line", hexed(colours[0] if len(colours) else "none"), str(handle.get_linestyle()[0]), "None")
    if hasattr(handle, "get_facecolor"):
        face = handle.get_facecolor()
        face = face[0] if getattr(face, "ndim", 1) == 2 and len(face) else face
        return ("patch", hexed(face), str(getattr(handle, "get_hatch", lambda: None)()))
    return (type(handle).__name__,)


def legend_clashes(fig) -> list[str]:
    """Every pair of entries of one legend that look alike, and every marker drawn on a dashed line."""
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    out = []
    for legend in legends:
        seen: dict[tuple, str] = {}
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            label = text.get_text()
            if handle is None:
                continue
            sig = _signature(handle)
            if sig in seen:
                out.append(f"legend entries {seen[sig]!r} and {label!r} look alike ({', '.join(sig[1:])})")
            seen.setdefault(sig, label)
            if sig[0] == "line" and sig[2] not in ("-", "solid", "None", "none", "") and sig[3] not in ("None", ""):
                out.append(f"legend entry {label!r}: its marker hides its dashes")
    return out


def raw_tex(fig) -> list[str]:
    """Every visible text of ``fig`` that shows TeX source: a ``\\command``, ``^{`` or ``_{`` outside ``$…$``."""
    from matplotlib.text import Text

    out = []
    for t in fig.findobj(Text):
        text = t.get_text()
        if t.get_visible() and _TEX_SOURCE.search(_MATH.sub("", text)):
            out.append(f"text {text!r} shows TeX source (put it between $…$ or write it out)")
    return out


def clipped_curves(fig) -> list[str]:
    """Every visible line of ``fig`` (clipped to its axes) with finite points more than :data:`EDGE_PX` past
    its axes' box: the axes cut it off, and the reader cannot tell where it went."""
    import numpy as np

    out = []
    for ax in fig.axes:
        if not (ax.get_visible() and ax.axison):
            continue
        box = ax.bbox
        for line in ax.get_lines():
            if not (line.get_visible() and line.get_clip_on()) or not len(line.get_xdata()):
                continue
            try:
                data = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
            except (TypeError, ValueError):  # categories or dates: not positions this check can compare
                continue
            xy = line.get_transform().transform(data)
            xy = xy[np.isfinite(xy).all(axis=1)]
            below, above = xy[:, 1] < box.y0 - EDGE_PX, xy[:, 1] > box.y1 + EDGE_PX
            outside = below | above | (xy[:, 0] < box.x0 - EDGE_PX) | (xy[:, 0] > box.x1 + EDGE_PX)
            if outside.any():
                where = "below" if below.any() else "above" if above.any() else "beside"
                out.append(
                    f"curve {line.get_label()!r} runs {where} its axes ({int(outside.sum())} points cut off): "
                    "widen the limits, or cap it on the edge and say so"
                )
    return out


def problems(fig, dpi: Positive, drawn: bool = False) -> list[str]:
    """Why ``fig`` would be hard to read in the book: text below the floor at either width (predicted
    from the figure's size before cropping), too many panels in a row, or legend entries that look alike.
    ``drawn`` as in :func:`smallest_text_pt`."""
    out = legend_clashes(fig) + raw_tex(fig) + clipped_curves(fig)
    smallest = smallest_text_pt(fig, drawn)
    width_px = fig.get_figwidth() * dpi
    for window, floor in MIN_TEXT_PX.items():
        if smallest is not None and text_px_on_screen(smallest, width_px, dpi, window) < floor - 1e-9:
            shown = text_px_on_screen(smallest, width_px, dpi, window)
            out.append(f"smallest text {smallest:g} pt shows at {shown:.1f} px in a {window} px window (< {floor:g})")
    drawn = fig.get_tightbbox().width  # inches, what bbox_inches="tight" will keep
    if drawn > FIGURE_WIDTH_IN * 1.04:
        out.append(f"the drawing spans {drawn:.2f} in, wider than the column's {FIGURE_WIDTH_IN} in")
    rows: dict[float, set[float]] = {}  # a twin axes shares its panel's place and is not counted again
    for ax in fig.axes:
        if ax.get_visible() and ax.axison and ax.get_label() != "<colorbar>":
            box = ax.get_position()
            rows.setdefault(round(box.y0, 3), set()).add(round(box.x0, 3))
    widest = max(map(len, rows.values()), default=0)
    if widest > PANELS_PER_ROW:
        out.append(f"{widest} panels in one row (at most {PANELS_PER_ROW})")
    return out
