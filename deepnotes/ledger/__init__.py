"""The claims ledger: an inventory of every numbered equation, table, figure and numeric or scaling
claim of the five source articles (one module per source), matched against the chapters' verdicts."""
