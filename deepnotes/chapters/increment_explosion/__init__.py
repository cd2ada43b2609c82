"""increment_explosion"""
