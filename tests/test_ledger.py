"""The claims ledger: inventory items and the citations read from verdict sources."""
import pytest

from deepnotes.ledger.citations import Citation, citations
from deepnotes.ledger.items import Item


@pytest.mark.parametrize("source, default, expected", [
    ("seed 000 annotated eqs. (53), (73)", None, [("000", "annotated", "eq. (53)"), ("000", "annotated", "eq. (73)")]),
    ("seed 003 annotated eqs. (31)-(33)", None, [("003", "annotated", f"eq. ({n})") for n in (31, 32, 33)]),
    ("§足够的小 eq. (10); measured", "004", [("004", "main", "eq. (10)")]),
    ("seed 000 annotated §12.1 table", None, [("000", "annotated", "table §12.1")]),
    ("seed 000 §事后分析; annotated eq. (55)", None, [("000", "annotated", "eq. (55)")]),
    ("seed 003 annotated eq. (38); seed 002 §残差连接", None, [("003", "annotated", "eq. (38)")]),
    ("seed 002 §残差连接", None, []),                                   # a section, no numbered item
    ("eq. (18)", None, []),                                            # no seed known: cites nothing
])
def test_a_source_string_names_its_seed_part_and_items(source, default, expected):
    assert citations(source, default) == [Citation(*e) for e in expected]


def test_an_item_refuses_an_unknown_part_or_kind():
    Item("eq. (1)", "main", "增量爆炸", "equation", "the loss change is the gradient dotted with the update")
    with pytest.raises(ValueError, match="part must be one of .*got 'appendix'"):
        Item("eq. (1)", "appendix", "s", "equation", "c")
    with pytest.raises(ValueError, match="kind must be one of .*got 'formula'"):
        Item("eq. (1)", "main", "s", "formula", "c")
