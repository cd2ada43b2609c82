"""Every chapter's answer is read from its verdict rows (issue 61): built at smoke as the page builds it, each clause
links to a row of the page's own tables with the same status, and no outcome word stands outside a clause
(:func:`deepnotes.show.say.problems` against the rows the page shows); a row whose status changes changes the words."""

from __future__ import annotations

import dataclasses

import pytest

import deepnotes as dn
from deepnotes.show import say
from deepnotes.show import verdicts as vd

SMOKE = dn.get_budget("smoke")


def _initialization():
    from deepnotes.chapters.initialization import answer, claims
    from deepnotes.chapters.initialization import experiments as ex

    table = ex.moment_table(SMOKE)
    return [answer.markdown(table, SMOKE), answer.details(table, SMOKE)], claims.moment_verdicts(table, SMOKE)


def _increment_explosion():
    from deepnotes.chapters.increment_explosion import answer, claims
    from deepnotes.chapters.increment_explosion import experiments as ex

    sweep = ex.loss_change_sweep(dn.RunContext.here(SMOKE))
    return [answer.markdown(sweep), answer.details(sweep)], claims.loss_change_verdicts(sweep)


def _magnitude_decomposition():
    from deepnotes.chapters.magnitude_decomposition import answer, claims
    from deepnotes.chapters.magnitude_decomposition import experiments as training

    comp = training.choice_comparison(dn.RunContext.here(SMOKE))
    rows = list(claims.main_text_verdicts(SMOKE)) + list(claims.article_story_verdicts(comp))
    return [answer.markdown(comp, SMOKE), answer.details(comp, SMOKE)], rows


def _post_vs_pre_norm():
    from deepnotes.chapters.post_vs_pre_norm import answer, claims
    from deepnotes.chapters.post_vs_pre_norm import experiments as ex

    probes, runs = ex.init_probes(SMOKE), ex.training_runs(dn.RunContext.here(SMOKE))
    rows = list(claims.identity_path(probes, SMOKE)) + list(claims.training(runs, SMOKE))
    return [answer.markdown(probes, runs, SMOKE), answer.details(probes, runs, SMOKE)], rows


def _thousand_layers():
    from deepnotes.chapters.thousand_layers import answer, claims
    from deepnotes.chapters.thousand_layers import experiments as ex

    runs = ex.train_runs(dn.RunContext.here(SMOKE))
    return [answer.markdown(runs, SMOKE), answer.details(runs, SMOKE)], claims.training(runs, SMOKE)


def _why_residuals():
    from deepnotes.chapters.why_residuals import answer, claims
    from deepnotes.chapters.why_residuals import experiments as training

    runs, sweep = training.train_sweep(dn.RunContext.here(SMOKE)), training.transformer_sweep(dn.RunContext.here(SMOKE))
    rows = list(claims.training_verdicts(runs, SMOKE)) + list(claims.transformer_verdicts(sweep, SMOKE))
    return [answer.markdown(runs, sweep, SMOKE), answer.details(runs, sweep, SMOKE)], rows


def _bert_init():
    from deepnotes.chapters.bert_init import answer
    from deepnotes.chapters.bert_init import experiments as ex

    probes = ex.sweep_probes(SMOKE)
    return [answer.markdown(probes), answer.details(probes)], []  # numbers and a derivation: no outcome stated


ANSWERS = {
    "initialization": _initialization,
    "increment_explosion": _increment_explosion,
    "magnitude_decomposition": _magnitude_decomposition,
    "post_vs_pre_norm": _post_vs_pre_norm,
    "thousand_layers": _thousand_layers,
    "why_residuals": _why_residuals,
    "bert_init": _bert_init,
}


@pytest.mark.parametrize("chapter", ANSWERS)
def test_every_answer_reads_the_rows_its_page_shows(chapter):
    statements, rows = ANSWERS[chapter]()
    by_anchor = {v.anchor: dataclasses.asdict(v) for v in rows}
    sentences = [s for st in statements for s in st.sentences]
    assert sentences and all(s.text for s in sentences)
    assert [p for s in sentences for p in say.problems(s, by_anchor)] == []
    if rows:  # the headline reads at least one row, and each clause links it
        spans = [span for s in statements[0].sentences for span in s.spans]
        assert spans and all(f'href="#{span.anchor}"' in statements[0]._repr_markdown_() for span in spans)


def test_the_initialization_answer_changes_its_words_with_the_rows_status(monkeypatch):
    """He + ReLU keeps E[x²] in expectation (the rows hold at cpu) and a typical draw sits below the mean: the words
    follow the rows, not the draws' mean (the c1850d2 answer counted He + ReLU among the settings that "fall")."""
    from deepnotes.chapters.initialization import answer, claims
    from deepnotes.chapters.initialization import experiments as ex

    table = ex.moment_table(SMOKE)
    original = claims.moment_verdicts

    def forced(status):
        def rows(t, b=None):
            return vd.VerdictTable([dataclasses.replace(v, status=status) for v in original(t, b)])

        return rows

    for status, words in (
        (vd.HOLDS, "the measured draws follow it"),
        (vd.WRONG, "the measured draws do not follow it"),
    ):
        monkeypatch.setattr(answer, "moment_verdicts", forced(status))
        head = answer.markdown(table, SMOKE).text
        assert words in head and "falls" not in head
    monkeypatch.setattr(answer, "moment_verdicts", forced(vd.UNCHECKABLE))
    assert "the measured draws are undecided for" in answer.markdown(table, SMOKE).text
    details = answer.details(table, SMOKE).text
    assert "A typical draw is not the mean" in details and "He + ReLU" in details


def test_no_chapter_prose_states_a_verdict_by_hand():
    """Issue 61: a take-away or a paragraph that says "holds", "is wrong", "is right", "borne out" or "as predicted"
    does so through a glued sentence rendered from its rows (:func:`deepnotes.show.say.typed_verdicts`)."""
    import nbformat
    from book_paths import ROOT

    found = [
        f"{path.name} cell {k}: {p}"
        for path in sorted((ROOT / "book").glob("*.ipynb"))
        if path.stem not in ("intro", "ledger")
        for k, cell in enumerate(nbformat.read(path, as_version=4).cells)
        if cell.cell_type == "markdown"
        for p in say.typed_verdicts(cell.source)
    ]
    assert found == []
