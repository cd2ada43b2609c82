"""why_residuals"""
