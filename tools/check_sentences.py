"""Read every chapter's recorded answer and glued sentences against its verdict rows (issue 61).

    python tools/check_sentences.py [RECORDS]          # a build's records (default: book/_verdicts)
    python tools/check_sentences.py --text FILE        # sentences not rendered from verdicts (one per line)

Each recorded sentence is checked by :func:`deepnotes.show.say.problems`: an outcome word ("trains", "falls",
"flat", "confirms", …) outside every verdict's clause, a clause whose row is missing from the page or has another
status there, a clause stating an outcome over a row that is not checkable here, a single seed's value quoted where
its row gives the median. A chapter that recorded no sentence fails too (its answer was not rendered through
:class:`~deepnotes.show.say.Statement`). ``--text`` reads plain sentences, as an older build printed them (no clause
of theirs came from a verdict), and lists their outcome words. Exits 1 on any problem.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def record_problems(folder: Path) -> list[str]:
    """Every problem of every chapter's recorded sentences in ``folder``, and each chapter without sentences."""
    from deepnotes.chapters import CHAPTERS
    from deepnotes.ledger.record import read_records

    records = read_records(folder)
    found = [f"{stem}: no record in {folder}" for stem in CHAPTERS if stem not in records]
    for stem, rec in records.items():
        if not rec.sentences:
            found.append(f"{stem}: recorded no answer sentence (its answer is not rendered from its verdicts)")
        found += rec.problems()
    return found


def text_problems(path: Path) -> list[str]:
    """The outcome words of each line of ``path``, none of which a verdict rendered."""
    from deepnotes.show.say import unrendered

    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [f"line {k + 1}: {p}" for k, line in enumerate(lines) for p in unrendered(line)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="?", type=Path, default=ROOT / "book" / "_verdicts")
    parser.add_argument("--text", type=Path, help="a file of plain sentences, one per line")
    args = parser.parse_args(argv)
    found = text_problems(args.text) if args.text else record_problems(args.records)
    for p in found:
        print(p)
    print(f"{len(found)} problem{'s' if len(found) != 1 else ''}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
