"""The chapter "After DeepNet: the depth rules in use today" (``book/depth_rules.ipynb``)."""
