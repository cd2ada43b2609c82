"""Chapter "Increment explosion" (book/increment_explosion.ipynb; seeds 000, 001 and 004)."""
