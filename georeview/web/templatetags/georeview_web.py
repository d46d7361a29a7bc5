"""``{% load georeview_web %}``: words for the pages from the record's codes."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def words(code: object) -> str:
    """A status or outcome code as words: ``approved_with_conditions``, approved with conditions."""
    return str(code or "").replace("_", " ")
