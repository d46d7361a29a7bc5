"""Django's app config for the web workspace."""

from __future__ import annotations

from django.apps import AppConfig


class WebConfig(AppConfig):
    """The web workspace: its job queue, pages and roles."""

    name = "georeview.web"
    label = "web"
    verbose_name = "georeview workspace"
    default_auto_field = "django.db.models.BigAutoField"
