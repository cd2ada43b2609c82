"""Chapter "Post-Norm vs Pre-Norm" (book/post_vs_pre_norm.ipynb; seeds 002 and 003)."""
