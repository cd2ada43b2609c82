"""Chapter "Why is BERT's initial standard deviation 0.02?" (book/bert_init.ipynb; seed 003)."""
