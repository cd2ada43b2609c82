"""Match the verdicts the chapters recorded against the ledger's inventory, and print what does not match.

    python tools/store_checked_outputs.py book/bert_init.ipynb     # runs the chapter at smoke: records book/_verdicts
    python tools/ledger_check.py [book/_verdicts] [--chapter bert_init] [--unchecked 003]

Prints the cited items the inventory lacks, the verdicts that cite no item and no paper, the items the
verdicts testing them judge in more than one way, coverage per source, and (``--unchecked SEED``) that
source's items no verdict tests (each with how many verdicts cite it as context).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from deepnotes.ledger import page
from deepnotes.ledger.citations import citations
from deepnotes.ledger.inventory import SOURCES
from deepnotes.ledger.record import read_records

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="book/_verdicts")
    parser.add_argument("--chapter", help="list this chapter's verdicts and what each cites")
    parser.add_argument("--unchecked", help="list this seed's items that no verdict cites")
    args = parser.parse_args()
    chapters = sorted(p.name for p in (ROOT / "deepnotes" / "chapters").iterdir() if (p / "__init__.py").exists())
    if args.chapter is not None and args.chapter not in chapters:  # checked before any record is needed
        parser.error(f"unknown chapter {args.chapter!r}; allowed: {', '.join(chapters)}")
    if args.unchecked is not None and args.unchecked not in SOURCES:
        parser.error(f"unknown seed {args.unchecked!r}; allowed: {', '.join(sorted(SOURCES))}")
    records = read_records(args.folder)
    if not records:
        raise SystemExit(f"no records in {args.folder}: run a chapter first (tools/store_checked_outputs.py)")
    if args.chapter and args.chapter not in records:
        parser.error(f"unknown chapter {args.chapter!r}; recorded: {', '.join(sorted(records))}")
    ledger = page.build(records)
    if args.unchecked and args.unchecked not in ledger.rows:
        parser.error(f"unknown seed {args.unchecked!r}; allowed: {', '.join(sorted(ledger.rows))}")
    print(page.records_summary(ledger), "\n")
    print(page.problems(ledger), "\n")
    print(page.conflicts_text(ledger), "\n")
    print(page.coverage_table(ledger))
    if args.chapter:
        for v in records[args.chapter].verdicts:
            cited = [f"{c.seed} {c.part} {c.ref}" for c in citations(v.source)]
            tests = cited[0] if cited else "— (a paper or a measurement)"
            context = ", ".join(cited[1:]) or "—"
            print(f"\n{v.claim}\n    source: {v.source}\n    tests: {tests}\n    context: {context}")
    if args.unchecked:
        for row in ledger.rows[args.unchecked]:
            if row.state == "not checked":
                context = f" (context of {len(row.mentions)})" if row.mentions else ""
                print(f"{row.item.part:9s} {row.item.ref:14s} [{row.item.chapter}]{context} {row.item.claim}")


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
