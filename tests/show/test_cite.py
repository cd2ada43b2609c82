"""deepnotes.show.cite: a verdict names what it tests (issue 61); the ledger gives the status to those items only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from deepnotes.ledger import page
from deepnotes.ledger.citations import Citation
from deepnotes.ledger.record import ChapterRecord, Record, subjects_record
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite

TEXT = "seed 000 annotated eqs. (26), (27)"


def test_the_named_item_is_the_subject_and_the_rest_is_context():
    v = vd.check_number("the closed form", cite(TEXT, tests="eq. (27)"), 1.0, 2.0)
    assert v.source == TEXT  # the row prints the text; its anchor hashes it, as before
    assert v.tested.subjects == (Citation("000", "annotated", "eq. (27)"),)
    assert v.tested.context == (Citation("000", "annotated", "eq. (26)"),)


def test_one_measurement_may_decide_several_items():
    c = cite("seed 003 annotated eqs. (44)-(46)", tests=("eq. (44)", "003 annotated eq. (46)"))
    assert [s.ref for s in c.subjects] == ["eq. (44)", "eq. (46)"] and [s.ref for s in c.context] == ["eq. (45)"]


@pytest.mark.parametrize(
    "text, kw, says",
    [
        (TEXT, {"tests": "eq. (28)"}, r"tests='eq. \(28\)' must name one of the items the text cites"),
        ("seed 000 annotated eqs. (26), (99)", {"tests": "eq. (99)"}, r"000 annotated eq. \(99\) is not an item"),
        (TEXT, {}, "say what the verdict tests"),
        (TEXT, {"paper": "DeepNet"}, "must be one of .* and named in the text"),
        ("seed 000 claim 7; seed 004 claim 7", {"tests": "claim 7"}, "must name one of"),
    ],
    ids=["not-cited", "not-in-inventory", "neither", "paper-not-named", "ambiguous-ref"],
)
def test_a_subject_that_is_not_there_is_refused_at_once(text, kw, says):
    with pytest.raises(ValueError, match=says):
        cite(text, **kw)


def test_a_shared_ref_is_named_with_its_source():
    c = cite("seed 000 §增量爆炸 claim 7; seed 004 §增量爆炸 claim 7", tests="004 claim 7")
    assert c.subjects == (Citation("004", "main", "claim 7"),)


def _record(v: vd.Verdict) -> Record:
    return Record(
        "magnitude_decomposition", "smoke", v.claim, v.source, v.claimed, v.computed, v.status, v.reason, v.anchor,
        None, subjects_record(v),
    )  # fmt: skip


def _row(ledger, ref):
    return next(r for r in ledger.rows["000"] if (r.item.part, r.item.ref) == ("annotated", ref))


def test_the_ledger_gives_the_status_to_the_named_subject_not_to_the_first_item_cited():
    """The case issue 61 found: a row that refutes eq. (27)'s closed form, citing the definition eq. (26) first,
    recorded eq. (26) as wrong. Named, eq. (27) carries the status and eq. (26) the mention."""
    wrong = vd.check_number("the closed form", cite(TEXT, tests="eq. (27)"), 1.0, 2.0)
    ledger = page.build(
        {"magnitude_decomposition": ChapterRecord("magnitude_decomposition", "smoke", "", (_record(wrong),))}
    )
    assert [v.status for v in _row(ledger, "eq. (27)").verdicts] == [vd.WRONG]
    assert _row(ledger, "eq. (26)").verdicts == () and len(_row(ledger, "eq. (26)").mentions) == 1


def test_a_paper_verdict_gives_no_item_a_status():
    v = vd.check_number("deep runs", cite("DeepNet, Fig. 4; seed 000 annotated eq. (26)", paper="DeepNet"), 1.0, 1.0)
    ledger = page.build({"thousand_layers": ChapterRecord("thousand_layers", "smoke", "", (_record(v),))})
    assert _row(ledger, "eq. (26)").verdicts == () and len(_row(ledger, "eq. (26)").mentions) == 1


def test_a_papers_finding_and_the_source_items_that_report_it():
    """A row that tests a paper's finding which a source reports (Admin's, reported by seed 000 claim 3): the paper
    is named, and the reporting items get the status."""
    c = cite("Liu et al. 2020 (Admin), Fig. 3; seed 000 claim 3", tests="claim 3", paper="Liu et al.")
    assert c.paper == "Liu et al." and c.subjects == (Citation("000", "main", "claim 3"),) and c.context == ()


CHECKS = {
    "check_number", "check_expr", "check_order", "check_true", "check_outcome", "late_training_gate", "check_estimate",
    "check_statistic", "check_each_seed", "check_near", "check_possible", "check_slope", "check_mean_at_deepest",
    "check_graded", "uncheckable", "check_scaling", "Verdict",
}  # fmt: skip


def _plain_text(node) -> bool:
    """A source written as text where a Cite goes: a string, an f-string, or a sum of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and (_plain_text(node.left) or _plain_text(node.right))


def test_no_chapter_gives_a_verdict_a_source_without_its_subject():
    """Static, so that a branch no smoke run reaches is held too (the recorder refuses what a run shows): every
    verdict a chapter or shared experiment builds takes its source as cite(...), never as plain text."""
    package = Path(__file__).resolve().parents[2] / "deepnotes"
    found = []
    for path in sorted([*package.glob("chapters/*/*.py"), *package.glob("shared/*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name not in CHECKS:
                continue
            given = [k.value for k in node.keywords if k.arg == "source"] + node.args[1:2]
            if any(_plain_text(g) for g in given):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno} {name}")
    assert not found, found
