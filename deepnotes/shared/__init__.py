"""Experiments that more than one chapter reports. Each is one function sized by one budget entry, so
the pages that show it show the same runs and the same verdicts (a test compares the recorded
verdicts across chapters)."""
