"""Pipelines that chain load, measure, judge and report: one review, a batch, a screening."""
