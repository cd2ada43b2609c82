"""Why an inventory item that makes a checkable claim is not checked: a short category per item (the
sentence beside it is the item's ``not_checked``). The ledger shows both, and a test holds every
not-checked item to one category and no category to an item that a verdict checks."""

from __future__ import annotations

CATEGORIES = {
    "production scale": "needs models, data or compute at production scale (billions of parameters, BLEU, pretraining)",
    "published fact": "a fact about a published model, paper or code base that the book does not download",
    "long training": "needs runs far longer than any budget trains",
    "not measured": "measurable in principle; no experiment of the book measures it yet",
    "not a claim": "an opinion, analogy, recommendation, question or gloss of notation, not a testable statement",
}

# (seed, part, ref) → category
WHY_NOT = {
    ("000", "main", "claim 2"): "production scale",
    ("000", "annotated", "claim §4.2.1"): "not measured",
    ("000", "annotated", "claim §7.2.2"): "not a claim",
    ("000", "annotated", "claim §7.2.3"): "not measured",
    ("000", "annotated", "claim §10.1.1"): "not measured",
    ("000", "annotated", "claim §10.2.1"): "not a claim",
    ("000", "annotated", "claim §10.3.1"): "long training",
    ("001", "main", "claim 2"): "production scale",
    ("001", "main", "claim 7"): "not a claim",
    ("002", "main", "claim 10"): "not a claim",
    ("002", "main", "claim 12"): "not a claim",
    ("003", "main", "claim 2"): "not measured",
    ("003", "main", "claim 4"): "published fact",
    ("003", "main", "claim 5"): "not measured",
    ("003", "main", "claim 11"): "not measured",
    ("003", "main", "claim 13"): "production scale",
    ("003", "main", "claim 14"): "production scale",
    ("003", "main", "claim 24"): "not measured",
    ("003", "main", "claim 28"): "published fact",
    ("003", "main", "claim 38"): "published fact",
    ("003", "main", "claim 43"): "published fact",
    ("003", "annotated", "claim §5.2.1"): "not measured",
    ("003", "annotated", "claim §5.3.2"): "not measured",
    ("003", "annotated", "claim §5.3.3"): "not measured",
    ("003", "annotated", "claim §5.3.4"): "published fact",
    ("003", "annotated", "eq. (52)"): "not measured",
    ("003", "annotated", "eq. (53)"): "not measured",
    ("003", "annotated", "claim §7.1.1"): "not a claim",
    ("003", "annotated", "claim §7.2.1"): "not measured",
    ("003", "annotated", "eq. (75)"): "not a claim",
    ("003", "annotated", "table §10.1"): "not measured",
    ("003", "annotated", "eq. (76)"): "not a claim",
    ("003", "annotated", "eq. (77)"): "not a claim",
    ("003", "annotated", "eq. (78)"): "not measured",
    ("003", "annotated", "eq. (79)"): "not a claim",
    ("003", "annotated", "claim §10.3.1"): "long training",
    ("003", "annotated", "claim §10.3.2"): "not a claim",
    ("003", "annotated", "claim §10.3.4"): "not a claim",
    ("003", "annotated", "claim §11.2.1"): "not measured",
    ("004", "main", "claim 9"): "not a claim",
    ("004", "comment", "comment 12"): "not a claim",
    ("004", "comment", "comment 13"): "not a claim",
    ("004", "comment", "comment 14"): "not measured",
    ("004", "comment", "comment 15"): "not measured",
}


def category(seed: str, part: str, ref: str) -> str:
    """The category of a not-checked item ("" for an item not listed)."""
    return WHY_NOT.get((seed, part, ref), "")
