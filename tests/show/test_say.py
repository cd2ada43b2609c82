"""Sentences rendered from verdicts (issue 61): a clause is the phrase its row's status chose, and the sentence test
(:func:`deepnotes.show.say.problems`) finds an outcome word no verdict rendered, a clause over another status, an
outcome stated over a row that is not checkable here, and a single seed's value quoted where the row gives a median."""

from __future__ import annotations

import sys
from dataclasses import asdict

import pytest
from book_paths import ROOT

from deepnotes.ledger import record
from deepnotes.show import say as sy
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite
from deepnotes.show.prose import glue_values

sys.path.insert(0, str(ROOT / "tools"))
import check_sentences  # noqa: E402


def _row(status: str, computed: str = "0.88 (0.10, 0.91, 0.88)") -> vd.Verdict:
    return vd.Verdict("He + ReLU keeps E[x²]", "seed 002 §激活函数 eq. (5)", "1", computed, status, "r")


def _rows(*verdicts: vd.Verdict) -> dict[str, dict]:
    return {v.anchor: asdict(v) for v in verdicts}


PHRASES = {"holds": "keeps E[x²]", "wrong": "does not keep E[x²]", "undecided": "cannot be judged here"}


def test_a_clause_says_what_its_rows_status_allows():
    for status, phrase in (
        (vd.HOLDS, "keeps E[x²]"),
        (vd.APPROX, "keeps E[x²] (approximately)"),
        (vd.WRONG, "does not keep E[x²]"),
        (vd.UNCHECKABLE, "cannot be judged here"),
    ):
        said = sy.say(_row(status), **PHRASES)
        assert said.text == phrase and said.status == status and said.anchor == _row(status).anchor
    with pytest.raises(ValueError, match="states an outcome \\('falls'\\)"):
        sy.say(_row(vd.UNCHECKABLE), holds="x", wrong="y", undecided="falls, perhaps")
    with pytest.raises(ValueError, match="states an outcome"):
        sy.link(_row(vd.HOLDS), "trains")


def test_the_sentence_test_passes_a_rendered_sentence_and_fails_each_kind_of_problem():
    held, open_ = _row(vd.HOLDS), _row(vd.UNCHECKABLE)
    good = sy.sentence("He + ReLU ", sy.say(held, **PHRASES), " at the median 0.88.")
    assert sy.problems(good, _rows(held)) == []
    typed = sy.Sentence("He + ReLU falls to 0.53.")  # c1850d2's kind: an outcome no verdict rendered
    assert "'falls' states an outcome that no verdict rendered" in sy.problems(typed, {})[0]
    gone = sy.problems(good, {})
    assert "reads a verdict" in gone[0] and "does not show" in gone[0]
    other = _row(vd.WRONG)
    assert "rendered as 'holds', but the page's row is 'wrong'" in sy.problems(good, {held.anchor: asdict(other)})[0]
    forced = sy.sentence("He + ReLU ", sy.Said("falls", open_.anchor, vd.UNCHECKABLE, open_.claim), ".")
    assert any("over a row that is not checkable" in p for p in sy.problems(forced, _rows(open_)))
    single = sy.sentence("He + ReLU ", sy.say(held, **PHRASES), " (0.91).")
    assert "0.91 is one seed's value where the row gives the median" in sy.problems(single, _rows(held))[0]
    named = sy.sentence("He + ReLU ", sy.say(held, **PHRASES), " (seed 1: 0.91).")
    assert sy.problems(named, _rows(held)) == []


def test_a_runs_clause_reads_its_median_and_links_the_row():
    v = vd.check_outcome(
        claim="c",
        source="s",
        expected={"post": False, "pre": True},
        measured={"post": [0.1, 0.2, 0.3], "pre": [0.9, 0.8, float("-inf")]},
        threshold=0.5,
        reason="r",
    )
    assert sy.say_run(v, "post", trains="trains", fails="does not train").text == "does not train (0.20)"
    assert sy.say_run(v, "pre", trains="trains", fails="does not train").text == "trains (0.80)"
    huge = vd.check_outcome(
        claim="c", source="s", expected={"x": False}, measured={"x": [-1.7e10] * 3}, threshold=0.5, reason="r"
    )
    assert sy.say_run(huge, "x", trains="t", fails="does not train").text == "does not train (-1.7e+10)"
    with pytest.raises(ValueError, match="no run 'deep'"):
        sy.say_run(v, "deep", trains="t", fails="f")
    with pytest.raises(ValueError, match="not a training-outcome verdict"):
        sy.say_run(_row(vd.HOLDS), "post", trains="t", fails="f")


def test_a_statement_links_each_clause_to_its_row_and_is_recorded(tmp_path):
    held = _row(vd.HOLDS)
    statement = sy.Statement([sy.sentence("He + ReLU ", sy.say(held, **PHRASES), ".")], lead="The answer.")
    assert statement.text == "**The answer.** He + ReLU keeps E[x²]."
    assert f'<a href="#{held.anchor}" title="this page&#x27;s verdict row: holds">keeps E[x²]</a>' in (
        statement._repr_markdown_()
    )
    try:
        record.record_verdicts("initialization", "smoke", tmp_path)
        statement._repr_markdown_()
        glue_values({"typed": "it trains", "number": "0.5"})
    finally:
        record.stop_recording()
    (rec,) = record.read_records(tmp_path).values()
    assert [s.text for s in rec.sentences] == ["He + ReLU keeps E[x²].", "it trains", "0.5"]
    problems = rec.problems()  # the row is not on this page, and the glued "trains" is typed
    assert any("does not show" in p for p in problems) and any("'trains' states an outcome" in p for p in problems)


def test_the_tool_fails_on_plain_sentences_and_on_records_without_sentences(tmp_path, capsys):
    text = tmp_path / "answers.txt"
    text.write_text("He + ReLU falls (0.53).\nDeepNorm stays flat under SGD (−0.02).\n", encoding="utf-8")
    assert check_sentences.main(["--text", str(text)]) == 1
    out = capsys.readouterr().out
    assert "'falls'" in out and "'stays'" in out and "'flat'" in out
    assert check_sentences.main([str(tmp_path)]) == 1
    assert "no record" in capsys.readouterr().out


def test_a_tally_counts_each_status_and_links_each_group_to_one_of_its_rows():
    """Issue 61: "the main text holds" is a tally of its rows, so a wrong row changes the words."""
    held = [_row(vd.HOLDS), vd.Verdict("b", "seed 002 §激活函数 eq. (6)", "1", "1", vd.HOLDS, "r")]
    assert sy.tally(held, "The main text").text == "The main text: all 2 rows hold"
    assert sy.tally(held[:1], "The main text").text == "The main text: its one row holds"
    mixed = [*held] + [
        vd.Verdict(s, "seed 002 §激活函数 eq. (5)", "1", "1", s, "r") for s in (vd.WRONG, vd.UNCHECKABLE, vd.APPROX)
    ]
    said = sy.tally(mixed, "The main text")
    assert said.text == (
        "The main text: 1 row is wrong, 1 row holds approximately, 2 rows hold and 1 row is not checkable here"
    )
    assert [s.status for s in said.spans] == [vd.WRONG, vd.APPROX, vd.HOLDS, vd.UNCHECKABLE]
    assert sy.problems(said, _rows(*mixed)) == []
    with pytest.raises(ValueError, match="no verdict rows"):
        sy.tally([], "The main text")
    annotated = vd.Verdict("c", cite("seed 000 annotated eqs. (26), (27)", tests="eq. (27)"), "1", "2", vd.WRONG, "r")
    assert annotated.annotated and not held[0].annotated
    split = sy.tallies([*held, annotated])
    assert split["main_tally"].text == "The main text: all 2 rows hold"
    assert split["annotated_tally"].text == "the annotated derivations: 1 row is wrong"
    assert list(sy.tallies(held)) == ["main_tally"]


def test_typed_verdicts_in_prose_are_found_and_rules_and_glued_values_are_not():
    """Issue 61: a chapter's Markdown that states a status by hand is found; a glued sentence, a status named as a
    word, a rule's condition and math are not."""
    assert sy.typed_verdicts("The main text holds. The reader's e² is wrong; the replies are right.") != []
    assert len(sy.typed_verdicts("The main text holds. The reader's e² is wrong.")) == 2
    assert sy.typed_verdicts("So the post-hoc argument is borne out, as predicted.") != []
    clean = (
        '{glue:text}`main_tally`. A row *holds* when the runs did it, "holds" in its column; the second holds '
        "only where the gradient falls like $1/t$; $a \\text{ holds}$ and `holds`."
    )
    assert sy.typed_verdicts(clean) == []


def test_a_runs_recorded_event_is_not_an_outcome_claimed():
    """A seed's loss that became NaN/inf at step k is a measurement ("diverged at step 14"), not a verdict."""
    assert sy.unrendered("N = 50 ADAM learned 0.10 (0.10, 0.20, 0.05), diverged at step 14, 30") == []
    assert sy.unrendered("N = 20 SGD learned diverged (div., div., -0.05), diverged at step 3, 9") == []  # a median
    assert sy.unrendered("the plain stack diverged") != []
    assert sy.unrendered("the plain stack diverged (all of it)") != []


def test_a_statement_of_several_lines_keeps_its_separator():
    said = sy.Statement([sy.Sentence("head\n"), sy.Sentence("- a"), sy.Sentence("- b")], lead="Measured.", sep="\n")
    assert said.text == "**Measured.**\nhead\n\n- a\n- b" and said._repr_markdown_() == said.text


def test_a_value_that_is_also_a_median_of_the_row_may_be_quoted():
    """A row listing several runs: "-0.01" is seed 0's value in one run and the median of another; quoting it is
    quoting that median (the cpu build's warmup row, issue 61), while a value that is only ever one seed's is not."""
    row = _row(vd.WRONG, "N = 18: -0.01 (-0.01, -0.01, -0.04); N = 30: -0.02 (-0.01, -0.02, -0.02)")
    quoted = sy.sentence(sy.link(row, "warmup"), " learned -0.01 at N = 18")
    assert sy.problems(quoted, _rows(row)) == []
    single = sy.sentence(sy.link(row, "warmup"), " learned -0.04 at N = 18")
    assert any("one seed's value" in p for p in sy.problems(single, _rows(row)))
