"""bert_init"""
