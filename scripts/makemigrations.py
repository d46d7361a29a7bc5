"""Make the store's migrations after a change to georeview/cases/models.py or web/models.py.

    .venv/bin/python scripts/makemigrations.py [--check]

Django writes them (``makemigrations cases web``) into georeview/cases/migrations and
georeview/web/migrations; they are committed with the model change and never edited by
hand. ``--check`` exits 1 when the models have changes no migration holds
(tests/test_cases_store.py runs it).
"""

from __future__ import annotations

import sys
import tempfile

from django.conf import settings


def main(argv: list[str]) -> int:
    import django
    from django.core.management import call_command

    with tempfile.TemporaryDirectory() as tmp:
        settings.configure(
            INSTALLED_APPS=[
                "django.contrib.contenttypes",
                "django.contrib.auth",
                "georeview.cases",
                "georeview.web",
            ],
            DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": f"{tmp}/db"}},
            DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
            USE_TZ=True,
        )
        django.setup()
        extra = ["--check", "--dry-run"] if "--check" in argv else []
        try:
            call_command("makemigrations", "cases", "web", *extra, verbosity=1)
        except SystemExit as exc:
            return int(exc.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
