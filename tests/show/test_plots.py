"""The shared loss figure: one run per label, or seeds drawn as a median line and a min–max band."""

import math

import matplotlib
import pytest

matplotlib.use("Agg")

from deepnotes.core.train import History
from deepnotes.show import plots, readable


def hist(losses, diverged_at=None):
    return History(losses=list(losses), diverged_at=diverged_at, floor=1.0, unigram=2.0)


def test_seeds_are_drawn_as_median_and_band_with_divergence_marked():
    seeds = [hist([3, 2, 1.5]), hist([3, 2.5, 2.0]), hist([3, math.nan], diverged_at=1)]
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {"post": seeds, "pre": hist([3, 2, 1])})
    lines = {line.get_label(): line for line in ax.get_lines()}
    med = lines["post (3 seeds, 1 diverged)"]
    assert list(med.get_xdata()) == [0, 1, 2]
    assert list(med.get_ydata()) == [3, 2.25, 1.75]  # step 1: the diverged seed has no finite loss
    assert len(ax.collections) == 1  # one band: "pre" is a single run
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(1.5) and band[:, 1].max() == pytest.approx(3)
    assert any(line.get_marker() == "x" and list(line.get_xdata()) == [1] for line in ax.get_lines())
    assert lines["pre"].get_ydata().tolist() == [3, 2, 1]


def test_every_run_diverged_at_step_zero_is_drawn_not_raised():
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {"none": [hist([math.nan], 0), hist([], 0)], "post": hist([math.inf], 0)})
    assert "post (diverged at step 0)" in [line.get_label() for line in ax.get_lines()]
    assert ax.get_xlim() == (-0.5, 1)  # a readable step axis around the marks


def test_a_blown_up_run_keeps_the_axes_readable_and_says_how_it_ended():
    blown = History(floor=1.0, unigram=2.0)
    for step, loss in enumerate([3.0, 2.5, 20.0, 4900.0]):
        if not blown.observe(step, loss):
            break
        blown.losses.append(loss)
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {"post": blown, "pre": hist([3, 2, 1])})
    labels = [line.get_label() for line in ax.get_lines()]
    assert "post (diverged at step 3 (loss 4.9e+03 > 30)), ▲▼ off the axes" in labels
    assert ax.get_ylim()[1] == pytest.approx(1.2 * 3.0)  # 1.2 × the first loss, not 4,900
    (capped,) = [line for line in ax.get_lines() if line.get_marker() == "^"]  # step 2's 20.0 is off the top
    assert list(capped.get_xdata()) == [2] and list(capped.get_ydata()) == [pytest.approx(3.6)]
    assert readable.clipped_curves(fig) == []  # the curve runs along the edge, marked, not cut off
    marks = [line for line in ax.get_lines() if line.get_marker() == "x"]
    assert list(marks[0].get_xdata()) == [3] and marks[0].get_ydata()[0] <= 1.2 * 3.0


def test_an_update_panel_with_no_steps_says_so():
    fig, (ax,) = plots.new_figure(1)
    plots.update_curves(ax, {"none": hist([], 0)})
    assert "no run took a step" in ax.texts[0].get_text()


def test_a_grid_figure_gives_its_axes_row_by_row_and_a_spare_slot_can_hold_the_key():
    fig, axes = plots.new_figure(3, height=2.0, key=True)
    assert len(axes) == 4 and tuple(fig.get_size_inches()) == (6.0, 4.0)
    axes[0].plot([0, 1], label="post")
    axes[0].plot([1, 0], label="deepnorm")
    plots.legend_panel(axes[3], axes[0])
    assert [t.get_text() for t in axes[3].get_legend().get_texts()] == ["post", "deepnorm"]
    assert not axes[3].axison  # the spare slot shows the key only
    fig.clf()


def test_panels_come_two_to_a_row_and_a_left_over_slot_is_removed():
    fig, axes = plots.new_figure(3, height=2.0)
    assert len(axes) == 3 and len(fig.axes) == 3 and tuple(fig.get_size_inches()) == (6.0, 4.0)
    assert axes[0].get_position().y0 == axes[1].get_position().y0 > axes[2].get_position().y0
    fig, (ax,) = plots.new_figure(1)
    assert fig.get_figwidth() == plots.SINGLE_WIDTH_IN


def test_the_loss_figure_keeps_two_lines_of_one_colour_apart():
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {"post": hist([3, 2]), "post, warmup": hist([3, 1]), "post lr 2": hist([3, 2.5])})
    styles = {line.get_label(): line.get_linestyle() for line in ax.get_lines()}
    assert styles["post"] == "-" and styles["post, warmup"] == "--"  # the palette's rule: warmup is a dash
    assert styles["post lr 2"] not in ("-", "--")  # outside the rule: the next dash its colour has not used


def test_an_update_panel_keeps_a_blown_up_run_from_setting_the_axis():
    blown = History(update_rms=[0.1, 1e30, math.inf], diverged_at=3)
    fig, (ax,) = plots.new_figure(1)
    plots.update_curves(ax, {"post": blown, "pre": History(update_rms=[0.1, 0.2, 0.3])})
    assert ax.get_ylim()[1] == pytest.approx(1.2 * 0.3)  # the healthy run's scale, not 1e30
    post = ax.get_lines()[0]
    assert list(post.get_ydata()) == pytest.approx([0.1, 0.36, 0.36])  # along the top edge
    assert any(line.get_marker() == "x" and list(line.get_xdata()) == [3] for line in ax.get_lines())


def test_a_capped_run_of_a_label_without_its_own_colour_is_marked_in_the_line_colour():
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {"a label no palette knows": History(losses=[3.0, 5.0, 0.5], floor=1.0, unigram=2.0)})
    line, up, down = ax.get_lines()[:3]
    assert (up.get_marker(), down.get_marker()) == ("^", "v")  # 5.0 above 1.2 × 3.0, 0.5 below 0.9 × 1.0
    assert up.get_color() == down.get_color() == line.get_color()
    assert readable.clipped_curves(fig) == []
