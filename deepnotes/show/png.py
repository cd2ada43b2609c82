"""A figure as the book's PNG, and the cell's way to show it.

Every figure of the book leaves the kernel through :func:`figure_png`: cropped to its content as
Jupyter's inline backend does, reduced to a 256-colour palette (a plot has few colours; the
antialiased edges are what the palette rounds), and tagged with two PNG text chunks the tests read
from the built page: the smallest text in image pixels (``deepnotes:min-text-px``, which the browser
test scales by the displayed width) and what :func:`deepnotes.show.readable.problems` found
(``deepnotes:problems``, empty when none).
"""

from __future__ import annotations

import io

import matplotlib.pyplot as plt

from deepnotes.core.config import check_allocation
from deepnotes.core.validate import Count
from deepnotes.show import readable

MIN_TEXT_KEY = "deepnotes:min-text-px"
PROBLEMS_KEY = "deepnotes:problems"
DPI = 100  # a figure inches wide at this dpi is shown 1:1 in a column of 688 px up to 6.9 inches
PALETTE_COLOURS = 256


def figure_png(fig, dpi: Count = DPI) -> bytes:
    """``fig`` as palette PNG bytes tagged with its smallest text (px at natural size = pt · dpi / 72)
    and its readability problems; the figure is closed so it does not also print as an output."""
    from PIL import Image, PngImagePlugin

    width_in, height_in = fig.get_size_inches()
    pixels = int(width_in * dpi) * int(height_in * dpi)  # before the tight bounding box trims it
    check_allocation(4 * pixels, {"dpi": dpi}, bytes_each=1)  # RGBA bytes of the rendered canvas
    _short_minor_log_labels(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    # savefig drew the figure: its tick labels have their text (two more draws cost a slider ~40 % of its time)
    smallest, found = readable.smallest_text_pt(fig, drawn=True), readable.problems(fig, dpi, drawn=True)
    plt.close(fig)
    buf.seek(0)
    image = Image.open(buf).convert("RGB")  # (H, W, 3), white behind the axes
    image = image.quantize(PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    info = PngImagePlugin.PngInfo()
    info.add_text(MIN_TEXT_KEY, "" if smallest is None else f"{smallest * dpi / 72:.2f}")
    info.add_text(PROBLEMS_KEY, "; ".join(found))
    out = io.BytesIO()
    image.save(out, format="png", optimize=True, pnginfo=info)
    return out.getvalue()


def _short_minor_log_labels(fig) -> None:
    """On a log axis spanning less than a decade matplotlib labels minor ticks as "3×10⁻¹", which collide
    at the book's font size in a half-column panel; label them "0.3", and the major ticks of such an axis
    "1" rather than "10⁰" (one axis in one notation: "1.002" beside "10⁰" reads as two scales)."""
    from matplotlib.ticker import LogFormatter, LogFormatterSciNotation

    class Plain(LogFormatter):  # matplotlib's choice of which minor ticks to label, written as 0.3
        def _num_to_string(self, x, vmin, vmax):
            return f"{x:g}"

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log" and isinstance(axis.get_minor_formatter(), LogFormatterSciNotation):
                axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(1, 0.4)))
                low, high = sorted(axis.get_view_interval())
                if low > 0 and high / low < 10 and isinstance(axis.get_major_formatter(), LogFormatterSciNotation):
                    axis.set_major_formatter(Plain(labelOnlyBase=False))  # under a decade: minors are labelled


def png_text(data: bytes) -> dict[str, str]:
    """The text chunks of PNG ``data`` (keyword → text)."""
    from PIL import Image

    return dict(Image.open(io.BytesIO(data)).text)


def show_figures(*figs) -> None:
    """Show ``figs`` (default: every open figure) as the book's PNGs under the cell and close them; outside
    IPython, matplotlib's own ``plt.show()``."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:  # pragma: no cover - IPython ships with every notebook runtime
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        plt.show()
        return
    for fig in figs or [plt.figure(n) for n in plt.get_fignums()]:
        display(Image(data=figure_png(fig)))
