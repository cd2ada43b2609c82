"""initialization"""
