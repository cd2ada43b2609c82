"""The book's figure rules as checks that can fail: text sizes on a laptop and a phone, two panels to a
row, legend entries that look alike, a marker on a dashed line, and the PNG that carries the findings."""

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from deepnotes.show import palette, plots, readable
from deepnotes.show.png import MIN_TEXT_KEY, PROBLEMS_KEY, figure_png, png_text


def test_two_entries_of_one_colour_and_style_are_a_clash_a_dash_tells_them_apart():
    fig, (ax,) = plots.new_figure(1)
    ax.plot([0, 1], color="tab:green", label="deepnorm, α only")
    ax.plot([1, 0], color="tab:green", label="deepnorm, β only")
    ax.legend()
    assert readable.legend_clashes(fig) == [
        "legend entries 'deepnorm, α only' and 'deepnorm, β only' look alike (#2ca02cff, -, None)"
    ]
    fig, (ax,) = plots.new_figure(1)
    for label in ("deepnorm", "deepnorm, α only", "deepnorm, β only", "deepnorm, warmup"):
        ax.plot([0, 1], **palette.line_style(label), label=label)
    ax.legend()
    assert readable.legend_clashes(fig) == []


def test_a_marker_on_a_dashed_line_hides_the_dash_in_the_legend():
    fig, (ax,) = plots.new_figure(1)
    ax.plot([0, 1], "o-", color="tab:red", label="post")
    ax.plot([1, 0], "o--", color="tab:red", label="post, warmup")
    ax.legend()
    assert readable.legend_clashes(fig) == ["legend entry 'post, warmup': its marker hides its dashes"]


def test_small_text_and_three_panels_in_a_row_are_problems():
    fig, (ax,) = plots.new_figure(1)
    ax.plot([0, 1], label="a")
    ax.legend(fontsize=6)
    found = readable.problems(fig, dpi=100)
    assert found == [  # 6 pt at 100 dpi is 8.3 px; on a phone the 4.6-inch figure shrinks to 358 of its 460 px
        "smallest text 6 pt shows at 8.3 px in a 1280 px window (< 9)",
        "smallest text 6 pt shows at 6.5 px in a 390 px window (< 7)",
    ]
    wide, _ = plt.subplots(1, 3, figsize=(10, 3))
    found = readable.problems(wide, dpi=100)
    assert "3 panels in one row (at most 2)" in found
    assert any("5.0 px in a 390 px window" in p for p in found)  # 10 inches in 358 px: 10 pt → 5.0 px
    plt.close("all")


def test_the_text_on_screen_follows_the_scale_of_the_column():
    assert readable.text_px_on_screen(9, 600, 100, 1280) == pytest.approx(12.5)  # narrower than 688 px: 1:1
    assert readable.text_px_on_screen(9, 600, 100, 390) == pytest.approx(12.5 * 358 / 600)
    assert readable.text_px_on_screen(9, 480, 80, 390) == pytest.approx(9 * 358 / (72 * 6))  # dpi cancels


def test_the_book_png_records_its_smallest_text_and_its_problems():
    fig, (ax,) = plots.new_figure(1)
    ax.plot([0, 1], label="pre")
    plots.label_axes(ax, "step", "loss")
    text = png_text(figure_png(fig, dpi=80))
    assert float(text[MIN_TEXT_KEY]) == pytest.approx(plots.LEGEND_PT * 80 / 72, abs=0.01)
    assert text[PROBLEMS_KEY] == ""
    fig, (ax,) = plots.new_figure(1)
    ax.plot([0, 1], color="k", label="a")
    ax.plot([0, 1], color="k", label="b")
    ax.legend(fontsize=9)
    assert "look alike" in png_text(figure_png(fig))[PROBLEMS_KEY]


def test_the_palette_rule_maps_style_to_colour_and_qualifier_to_dash():
    assert palette.line_style("post, warmup") == {"color": "tab:red", "linestyle": "--"}
    assert palette.line_style("pre") == {"color": "tab:blue", "linestyle": "-"}
    assert palette.dash("deepnorm, α only") != palette.dash("deepnorm, β only") != "-"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_tex_source_outside_math_is_a_problem_inside_dollars_it_is_math():
    fig, (ax,) = plots.new_figure(1)
    ax.plot([0, 1], label="Π(1+v)^{-1/2}")  # what BERT's slider legend printed at cpu (issue 48)
    ax.plot([1, 0], color="k", label=r"$\Pi(1+v)^{-1/2}$")
    ax.set_title(r"\alpha written out")
    ax.legend()
    assert sorted(readable.raw_tex(fig)) == [
        "text '\\\\alpha written out' shows TeX source (put it between $…$ or write it out)",
        "text 'Π(1+v)^{-1/2}' shows TeX source (put it between $…$ or write it out)",
    ]
    plt.close("all")


def test_a_curve_the_axes_cut_off_is_a_problem_one_capped_on_the_edge_is_not():
    fig, (ax,) = plots.new_figure(1)
    ax.plot([0, 1, 2], [1.0, 0.2, 0.5], label="loss")
    ax.set_ylim(0.4, 1.1)  # the 1000-layer chapter's loss curves left their axes at the bottom (issue 48)
    fig.canvas.draw()
    assert readable.clipped_curves(fig) == [
        "curve 'loss' runs below its axes (1 points cut off): widen the limits, or cap it on the edge and say so"
    ]
    ax.lines[0].set_ydata([1.0, 0.4, 0.5])  # capped on the edge
    ax.axhline(0.7, color="k", ls=":")  # a reference line spans the axes in axes coordinates: not cut off
    assert readable.clipped_curves(fig) == []
    plt.close("all")


def test_an_axis_under_a_decade_is_written_in_one_notation():
    fig, (ax,) = plots.new_figure(1)
    ax.semilogy([0, 1], [0.998, 1.004])
    text = png_text(figure_png(fig))
    assert text[PROBLEMS_KEY] == ""
    fig, (ax,) = plots.new_figure(1)
    ax.semilogy([0, 1], [0.998, 1.004])
    png_module = __import__("deepnotes.show.png", fromlist=["_short_minor_log_labels"])
    png_module._short_minor_log_labels(fig)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels(which="both") if t.get_text()]
    assert labels and not any("10^" in label or "mathdefault" in label for label in labels), labels
    plt.close("all")
