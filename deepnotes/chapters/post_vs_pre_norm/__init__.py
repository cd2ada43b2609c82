"""post_vs_pre_norm"""
