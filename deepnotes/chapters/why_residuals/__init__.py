"""Chapter "Why residuals?" (book/why_residuals.ipynb; seed 004)."""
