"""The claims ledger: inventory items and the citations read from verdict sources."""

import dataclasses
import re

import pytest

from deepnotes.ledger.citations import Citation, citations
from deepnotes.ledger.items import Item
from deepnotes.show.cite import cite


@pytest.mark.parametrize(
    "source, expected",
    [
        ("seed 000 annotated eqs. (53), (73)", [("000", "annotated", "eq. (53)"), ("000", "annotated", "eq. (73)")]),
        ("seed 003 annotated eqs. (31)-(33)", [("003", "annotated", f"eq. ({n})") for n in (31, 32, 33)]),
        ("seed 004 §足够的小 eq. (10); measured", [("004", "main", "eq. (10)")]),
        ("seed 000 annotated §12.1 table", [("000", "annotated", "table §12.1")]),
        (
            "seed 003 annotated table §9.1; seed 003 annotated tables §9.2, §9.3",
            [("003", "annotated", f"table §9.{n}") for n in (1, 2, 3)],
        ),
        (
            "seed 000 §事后分析 claim 12; seed 000 annotated eq. (55)",
            [("000", "main", "claim 12"), ("000", "annotated", "eq. (55)")],
        ),
        (
            "seed 003 annotated eq. (38); seed 002 §残差连接 claims 3 and 4",
            [("003", "annotated", "eq. (38)"), ("002", "main", "claim 3"), ("002", "main", "claim 4")],
        ),
        (
            "seed 003 annotated claims §9.1.1, §9.1.2",
            [("003", "annotated", "claim §9.1.1"), ("003", "annotated", "claim §9.1.2")],
        ),
        (
            "seed 001 side notes 2, 4; seed 001 figure 1",
            [("001", "side note", "side note 2"), ("001", "side note", "side note 4"), ("001", "main", "figure 1")],
        ),
        ("seed 004 comments 1-3", [("004", "comment", f"comment {n}") for n in (1, 2, 3)]),
        (
            "seed 000 annotated eq. (49), §8.2 claim §8.2.3",  # an equation list stops at a section
            [("000", "annotated", "eq. (49)"), ("000", "annotated", "claim §8.2.3")],
        ),
        ("seed 002 §残差连接", []),  # a section, no numbered item
        ("eq. (18)", []),  # no seed named: cites nothing of the sources
        (
            "seed 000 §增量爆炸 claim 1; DeepNet Fig. 5; measured",
            [("000", "main", "claim 1")],
        ),  # a paper's figure is not the seed's
    ],
)
def test_a_source_string_names_its_seed_part_and_items(source, expected):
    assert citations(source) == [Citation(*e) for e in expected]


def test_an_item_refuses_an_unknown_part_kind_or_chapter():
    Item(
        "eq. (1)",
        "main",
        "增量爆炸",
        "equation",
        "the loss change is the gradient dotted with the update",
        "increment_explosion",
    )
    with pytest.raises(ValueError, match="part must be one of .*got 'appendix'"):
        Item("eq. (1)", "appendix", "s", "equation", "c", "bert_init")
    with pytest.raises(ValueError, match="kind must be one of .*got 'formula'"):
        Item("eq. (1)", "main", "s", "formula", "c", "bert_init")
    with pytest.raises(ValueError, match="chapter must be one of .*got 'bert'"):
        Item("eq. (1)", "main", "s", "equation", "c", "bert")


def _items():
    return {
        "000": (
            Item("eq. (1)", "main", "增量爆炸", "equation", "ΔL ≈ ⟨∇L, Δθ⟩", "increment_explosion"),
            Item(
                "eq. (2)",
                "main",
                "量级分析",
                "definition",
                "λ = argmin ...",
                "magnitude_decomposition",
                "definition: nothing to check",
            ),
            Item("claim 1", "main", "增量爆炸", "scaling", "ΔL = O(ηNK)", "increment_explosion"),
        )
    }


def test_chapters_record_the_verdicts_they_show_and_the_ledger_matches_them(tmp_path):
    from deepnotes.ledger import page
    from deepnotes.ledger.record import read_records, record_verdicts, stop_recording
    from deepnotes.show import verdicts as vd

    try:
        record_verdicts("increment_explosion", "smoke", tmp_path)
        shown = vd.VerdictTable(
            [
                vd.check_number("the first equation", cite("seed 000 §增量爆炸 eq. (1)", tests="eq. (1)"), 1.0, 1.0),
                vd.check_number("cites a paper", cite("DeepNet Fig. 5; measured", paper="DeepNet"), 1.0, 1.0),
            ]
        )
        html = shown._repr_html_()
        shown._repr_html_()  # shown twice, recorded once
        with pytest.raises(ValueError, match="'names nothing' .* names no subject: give its source as cite"):
            vd.VerdictTable([vd.check_number("names nothing", "seed 000 §增量爆炸 eq. (1)", 1.0, 1.0)])._repr_html_()
    finally:
        stop_recording()
    vd.VerdictTable([vd.check_number("after the recording stopped", "seed 000 eq. (1)", 1, 1)])._repr_html_()
    records = read_records(tmp_path)
    assert list(records) == ["increment_explosion"] and records["increment_explosion"].budget == "smoke"
    assert [v.claim for v in records["increment_explosion"].verdicts] == [v.claim for v in shown]
    assert all(f"id='{v.anchor}'" in html for v in shown)  # the ledger's links land on these rows
    # what cite() refuses at once can still reach the ledger from a record file: listed, never given a status
    lacking = _record(
        "a cited item the inventory lacks", "seed 000 eq. (9)", vd.WRONG, subject=("000", "main", "eq. (9)")
    )
    unnamed = _record("names nothing", "measured", vd.HOLDS, subject=None)
    chapter = records["increment_explosion"]
    records = {"increment_explosion": dataclasses.replace(chapter, verdicts=(*chapter.verdicts, lacking, unnamed))}
    ledger = page.build(records, _items())
    states = [r.state for r in ledger.rows["000"]]
    assert states == ["checked", "needs no check", "not checked"]
    only_uncheckable = page.Row(
        "000",
        ledger.rows["000"][0].item,
        (dataclasses.replace(ledger.rows["000"][0].verdicts[0], status=vd.UNCHECKABLE),),
    )
    assert only_uncheckable.state == "not checked"  # issue 30: cited, but nothing judged
    assert [(v.claim, c.ref) for v, c in ledger.dangling] == [("a cited item the inventory lacks", "eq. (9)")]
    assert [v.claim for v in ledger.unsourced] == ["names nothing"]
    cov = page.coverage(ledger)[0]
    assert (cov.total, cov.checked, cov.no_check_needed, cov.not_checked) == (3, 1, 1, 1)
    table = page.source_table(ledger, "000")._repr_html_()
    assert f"increment_explosion.html#{shown[0].anchor}" in table and "definition: nothing to check" in table
    assert "eq. (9)" in page.problems(ledger) and "'names nothing' (measured) names no subject" in page.problems(ledger)


def _record(
    claim: str, source: str, status: str, chapter: str = "increment_explosion", subject=("000", "main", "claim 1")
):
    """A record as a chapter writes it, testing ``subject`` (seed, part, ref; None: naming nothing)."""
    from deepnotes.ledger.record import Record

    tested = None if subject is None else {"subjects": [list(subject)], "paper": ""}
    anchor = f"verdict-{abs(hash(claim)) % 10**10}"
    return Record(chapter, "smoke", claim, source, "c", "c", status, "why", anchor, None, tested)


def test_only_a_verdicts_subject_gets_its_status_the_rest_are_mentions():
    """Issue 44, 61: a verdict tests the subjects its chapter names; an item it cites besides them is context,
    listed as a mention with no status (a test of seed 000's eq. (1) must not mark claim 1)."""
    from deepnotes.ledger import page
    from deepnotes.ledger.record import ChapterRecord
    from deepnotes.show import verdicts as vd

    tests_eq = _record(
        "ΔL ≈ ⟨∇L, Δθ⟩",
        "seed 000 §增量爆炸 eq. (1); seed 000 §增量爆炸 claim 1",
        vd.WRONG,
        subject=("000", "main", "eq. (1)"),
    )
    records = {"increment_explosion": ChapterRecord("increment_explosion", "smoke", "now", (tests_eq,))}
    eq1, _, claim1 = page.build(records, _items()).rows["000"]
    assert eq1.verdicts == (tests_eq,) and eq1.mentions == () and eq1.state == "checked"
    assert claim1.verdicts == () and claim1.mentions == (tests_eq,) and claim1.state == "not checked"
    ledger = page.build(records, _items())
    table = page.source_table(ledger, "000")._repr_html_()
    assert "cited as context by" in table and "1 cite it as context" in table
    assert table.count(f"#{tests_eq.anchor}") == 2  # the status link beside eq. (1), the mention beside claim 1
    assert page.conflicts(ledger) == [] and "gets one status" in page.conflicts_text(ledger)


def test_an_item_gets_one_status_settings_that_disagree_make_it_mixed_one_setting_judged_twice_conflicts():
    """Issue 44: every item gets one status (Row.status). Settings that disagree (holds at one depth, wrong
    at another: different claim texts) make it "depends on the setting", listed with the claims on each
    side; one setting (the same claim text) judged two ways is a conflict; a mention gives no status."""
    from deepnotes.ledger import page
    from deepnotes.ledger.record import ChapterRecord
    from deepnotes.show import verdicts as vd

    def ledger_of(*verdicts):
        return page.build({"x": ChapterRecord("increment_explosion", "smoke", "now", verdicts)}, _items())

    settings = ledger_of(
        _record("N = 12: trains", "seed 000 §增量爆炸 claim 1", vd.HOLDS),
        _record("N = 24: trains", "seed 000 §增量爆炸 claim 1; measured", vd.WRONG, "post_vs_pre_norm"),
        _record(
            "context only",
            "seed 000 §增量爆炸 eq. (1); seed 000 §增量爆炸 claim 1",
            vd.WRONG,
            subject=("000", "main", "eq. (1)"),
        ),
    )
    claim1 = settings.rows["000"][2]
    assert claim1.statuses == (vd.HOLDS, vd.WRONG) and claim1.status == page.MIXED
    assert claim1.settings(vd.WRONG) == ("N = 24: trains",)  # the mention is not among them
    assert page.conflicts(settings) == []
    (line,) = page.mixed(settings)
    assert "claim 1: holds in 'N = 12: trains'; wrong in 'N = 24: trains'" in line
    assert "1 of them depends on the setting" in page.conflicts_text(settings)
    assert "item: <b>depends on the setting</b>" in page.source_table(settings, "000")._repr_html_()
    clash = ledger_of(
        _record("N = 12: trains", "seed 000 §增量爆炸 claim 1", vd.HOLDS),
        _record("N = 12: trains", "seed 000 §增量爆炸 claim 1; measured", vd.WRONG, "post_vs_pre_norm"),
    )
    (found,) = page.conflicts(clash)
    assert "claim 1 has 2 statuses for 'N = 12: trains'" in found and "wrong (post_vs_pre_norm)" in found
    assert page.conflicts_text(clash).startswith("1 settings get more than one status")
    weaker = ledger_of(
        _record("exact", "seed 000 §增量爆炸 claim 1", vd.HOLDS),
        _record("near", "seed 000 §增量爆炸 claim 1", vd.APPROX),
    )
    assert weaker.rows["000"][2].status == vd.APPROX and page.mixed(weaker) == []
    undecided = ledger_of(  # a measurement that cannot decide does not contradict one that does
        _record("derived", "seed 000 §增量爆炸 claim 1", vd.HOLDS),
        _record("too few seeds", "seed 000 §增量爆炸 claim 1; measured", vd.UNCHECKABLE, "post_vs_pre_norm"),
    )
    assert undecided.rows["000"][2].status == vd.HOLDS and page.conflicts(undecided) == []
    assert ledger_of().rows["000"][2].status == ""


# what a measured result sounds like: a reason that says it types a result instead of naming the verdict
RESULT_WORDS = re.compile(
    r"\b(holds?|wrong|diverg\w*|stall\w*|settl\w*|fail\w*|trains? (?:at|with|without)|does not train)\b", re.I
)


def typed_results(reason: str) -> list[str]:
    """The result words of a reason outside its {{verdict references}} and its “quoted source words”."""
    from deepnotes.ledger import page

    bare = re.sub(r"“[^”]*”", " ", page.REFERENCE.sub(" ", reason))
    return RESULT_WORDS.findall(bare)


def test_ledger_reasons_name_verdicts_instead_of_typing_results():
    """Issue 44: a not-checked or no-check reason that speaks of a chapter's result names the verdict,
    {{part of its claim}}, and the page shows that verdict's recorded status; no reason types the result."""
    typed = [
        f"{seed} {it.part} {it.ref}: {words}"
        for seed, its in ALL_ITEMS.items()
        for it in its
        for reason in (it.not_checked, it.if_unchecked)
        if reason and (words := typed_results(reason))
    ]
    assert not typed, typed
    assert typed_results("Post-LN without warmup stalls; “need time to settle”") == ["stalls"]
    assert typed_results("shown by {{Post-LN without warmup does not train}}") == []


def test_a_reasons_reference_shows_the_verdicts_status():
    from deepnotes.ledger import page
    from deepnotes.show import verdicts as vd

    v = _record(
        "Post-LN needs warmup: it trains with a 3-step warmup, not without at N = 4", "seed 000 claim 1", vd.WRONG
    )
    text = page.reason_html("measured there ({{Post-LN needs warmup}}) and <here>", [v])
    assert f"#{v.anchor}'" in text and "><b>wrong</b></a> in increment explosion" in text and "&lt;here&gt;" in text
    assert "not recorded in this build" in page.reason_html("({{no such verdict}})", [v])
    assert page.references("a {{x}} and {{y z}}") == ["x", "y z"]


def test_recording_refuses_an_unknown_chapter(tmp_path):
    from deepnotes.ledger.record import record_verdicts

    with pytest.raises(ValueError, match="chapter must be one of .*got 'bert'"):
        record_verdicts("bert", "smoke", tmp_path)


# The inventory ----------------------------------------------------------------------------------------
from deepnotes.ledger import inventory as inv  # noqa: E402
from deepnotes.ledger import seedtext  # noqa: E402

ALL_ITEMS = inv.inventory()


@pytest.mark.parametrize("seed", list(inv.SOURCES))
def test_each_inventory_item_is_unique_and_says_something(seed):
    items = ALL_ITEMS[seed]
    keys = [(it.part, it.ref) for it in items]
    assert len(keys) == len(set(keys)), "an item is listed twice"
    for it in items:
        assert it.claim.strip() and len(it.claim) <= 200, it.ref
        assert it.ref.startswith(("eq. (", "table ", "figure ", "side note ", "comment ", "claim ")), it.ref
        assert citations(f"seed {seed} {it.part if it.part != 'main' else ''} {it.ref}") == [
            Citation(seed, it.part, it.ref)
        ], f"{it.ref}: a verdict could not cite this ref"
        if it.kind == "definition":
            assert it.if_unchecked, f"{it.ref}: a definition says why it needs no check"


def test_every_not_checked_item_has_a_category_and_a_sentence():
    """Issue 30: a "not checked" reason is a short category (deepnotes.ledger.unchecked) plus a sentence;
    a category left on an item that no longer says why it is not checked is stale."""
    from deepnotes.ledger import unchecked

    listed = {(seed, it.part, it.ref) for seed, its in ALL_ITEMS.items() for it in its if it.not_checked}
    assert listed == set(unchecked.WHY_NOT), listed ^ set(unchecked.WHY_NOT)
    assert set(unchecked.WHY_NOT.values()) <= set(unchecked.CATEGORIES)
    assert all(len(it.not_checked) >= 20 for its in ALL_ITEMS.values() for it in its if it.not_checked)


@pytest.mark.skipif(not seedtext.SEED_DIR.exists(), reason="the source articles are not beside this checkout")
@pytest.mark.parametrize("seed", list(inv.SOURCES))
def test_the_inventory_lists_every_numbered_item_of_the_source_and_no_other(seed):
    listed = {
        (it.part, it.ref)
        for it in ALL_ITEMS[seed]
        if it.ref.startswith(("eq. (", "figure ", "side note ")) or (it.ref.startswith("table §"))
    }
    numbered = {(n.part, n.ref) for n in seedtext.seed_items(seed)}
    assert numbered - listed == set(), "numbered items of the source missing from the inventory"
    assert listed - numbered == set(), "the inventory names numbered items the source does not have"


GOOD_ITEM = (
    'ref = "eq. (1)"\npart = "main"\nsection = ""\nkind = "equation"\nclaim = "x = 1"\nchapter = "initialization"\n'
)
HEAD = '[source]\ntitle = "t"\nenglish = "e"\nauthor = "a"\ndate = "d"\nurl = ""\n'


@pytest.mark.parametrize(
    "text, says",
    [
        (
            HEAD + "[[item]]\n" + GOOD_ITEM + 'clam = "a misspelt key"\n',
            r"item 1 \('eq. \(1\)'\): unknown keys \['clam'\]",
        ),
        (HEAD + "[[item]]\n" + GOOD_ITEM.replace('kind = "equation"\n', ""), r"missing keys \['kind'\]"),
        (HEAD + "[[item]]\n" + GOOD_ITEM.replace("equation", "poem"), r"kind must be one of .*'poem'"),
        (HEAD + "[[item]]\n" + GOOD_ITEM + "[[item]]\n" + GOOD_ITEM, r"item 2 .*'eq. \(1\)' is listed twice in part"),
        (
            HEAD.replace('url = ""\n', "") + "[[item]]\n" + GOOD_ITEM,
            r"\[source\]: unknown keys \[\], missing keys \['url'\]",
        ),
    ],
    ids=["unknown-key", "missing-key", "bad-kind", "twice", "source-without-url"],
)
def test_an_inventory_file_with_a_bad_item_is_refused_naming_the_file_and_item(tmp_path, text, says):
    """The inventories are data (issue 61): a misspelt or missing key is an error naming the file and the item,
    never a key dropped silently."""
    path = tmp_path / "999.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=says) as err:
        inv.read_source(path, "999")
    assert str(path) in str(err.value)


def test_every_source_file_is_read_in_the_articles_order():
    """One file per article, its items in the article's order (the ledger lists them so): the first and last
    refs of each part come from the file as written."""
    assert sorted(p.stem for p in inv.SOURCE_FILES.glob("*.toml")) == list(inv.SEEDS) == list(inv.SOURCES)
    for seed in inv.SEEDS:
        raw = inv.tomllib.loads((inv.SOURCE_FILES / f"{seed}.toml").read_text())["item"]
        assert [(t["part"], t["ref"]) for t in raw] == [(it.part, it.ref) for it in inv.items(seed)]
