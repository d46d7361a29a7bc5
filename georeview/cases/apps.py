"""The Django application of the cases store (:mod:`georeview.cases.models`)."""

from __future__ import annotations

from django.apps import AppConfig


class CasesConfig(AppConfig):
    """The cases app: its models, migrations and (next) its workspace views."""

    name = "georeview.cases"
    label = "cases"
    verbose_name = "georeview cases"
    default_auto_field = "django.db.models.BigAutoField"
