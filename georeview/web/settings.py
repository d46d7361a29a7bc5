"""The Django settings of a served workspace, on top of the case store's own.

Everything security rests on is the framework's or a maintained app's: Django's
authentication (Argon2 password hashes), sessions and CSRF middleware, django-axes for
login throttling and django-csp for the Content-Security-Policy. Nothing here is
hand-written auth. The settings are a function of the workspace folder and the serve
options, so every process of one workspace (server and workers) runs the same ones.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["LOGIN_LOCKOUT", "UPLOAD_LIMIT_BYTES", "web_settings"]

#: Failed sign-ins (per user name and address) before the account is locked, and for how long.
LOGIN_LOCKOUT = (5, dt.timedelta(minutes=15))
#: The largest request body (a submission zip or a parcel file) the server reads.
UPLOAD_LIMIT_BYTES = 500 * 1024 * 1024

_SELF = "'self'"


def web_settings(
    folder: Path,
    *,
    hosts: Sequence[str] = ("localhost", "127.0.0.1", "[::1]"),
    https: bool = False,
    trusted_origins: Sequence[str] = (),
) -> dict[str, Any]:
    """The settings :func:`georeview.cases.store.open_workspace` adds for the web workspace.

    Parameters
    ----------
    folder : Path
        The workspace folder (uploads are received into its ``files/.uploads``).
    hosts : sequence of str
        The host names the server answers to (Django's ``ALLOWED_HOSTS``).
    https : bool
        Behind a reverse proxy that terminates TLS: cookies are sent over HTTPS only and the
        proxy's ``X-Forwarded-Proto`` header is trusted.
    trusted_origins : sequence of str
        Origins (``https://permits.example.gov``) a form may be posted from, behind a proxy.
    """
    uploads = folder / "files" / ".uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    lockout_failures, lockout_time = LOGIN_LOCKOUT
    out: dict[str, Any] = {
        "INSTALLED_APPS": [
            "django.contrib.sessions",
            "django.contrib.messages",
            "axes",
            "georeview.web",
        ],
        "ALLOWED_HOSTS": list(hosts),
        "ROOT_URLCONF": "georeview.web.urls",
        "MIDDLEWARE": [
            "django.middleware.security.SecurityMiddleware",
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.common.CommonMiddleware",
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
            "django.contrib.messages.middleware.MessageMiddleware",
            "django.middleware.clickjacking.XFrameOptionsMiddleware",
            "csp.middleware.CSPMiddleware",
            # last, as its documentation says: it answers a locked-out sign-in
            "axes.middleware.AxesMiddleware",
        ],
        "TEMPLATES": [
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
                "OPTIONS": {
                    "context_processors": [
                        "django.template.context_processors.request",
                        "django.contrib.auth.context_processors.auth",
                        "django.contrib.messages.context_processors.messages",
                        "georeview.web.roles.context",
                    ]
                },
            }
        ],
        "AUTHENTICATION_BACKENDS": [
            "axes.backends.AxesStandaloneBackend",
            "django.contrib.auth.backends.ModelBackend",
        ],
        "PASSWORD_HASHERS": [
            "django.contrib.auth.hashers.Argon2PasswordHasher",
            "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        ],
        "AUTH_PASSWORD_VALIDATORS": [
            {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
            {
                "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
                "OPTIONS": {"min_length": 10},
            },
            {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
            {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
        ],
        "LOGIN_URL": "login",
        "LOGIN_REDIRECT_URL": "home",
        "LOGOUT_REDIRECT_URL": "login",
        "SESSION_ENGINE": "django.contrib.sessions.backends.db",
        "SESSION_COOKIE_AGE": 8 * 3600,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": https,
        "CSRF_COOKIE_SECURE": https,
        "CSRF_COOKIE_SAMESITE": "Strict",
        "CSRF_TRUSTED_ORIGINS": list(trusted_origins),
        "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https") if https else None,
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "SECURE_REFERRER_POLICY": "same-origin",
        "SECURE_CROSS_ORIGIN_OPENER_POLICY": "same-origin",
        "X_FRAME_OPTIONS": "SAMEORIGIN",
        "AXES_FAILURE_LIMIT": lockout_failures,
        "AXES_COOLOFF_TIME": lockout_time,
        # one person's mistyped password locks that name from that address, not the office
        "AXES_LOCKOUT_PARAMETERS": [["username", "ip_address"]],
        "AXES_RESET_ON_SUCCESS": True,
        "AXES_VERBOSE": False,
        # every page: scripts, styles and images from georeview itself only; the review's
        # own pages (report, map) are served with a sandboxed policy of their own (files.py)
        "CONTENT_SECURITY_POLICY": {
            "DIRECTIVES": {
                "default-src": [_SELF],
                "script-src": [_SELF],
                "style-src": [_SELF],
                "img-src": [_SELF, "data:"],
                "frame-src": [_SELF],
                "connect-src": [_SELF],
                "object-src": ["'none'"],
                "base-uri": ["'none'"],
                "form-action": [_SELF],
                "frame-ancestors": [_SELF],
            }
        },
        "FILE_UPLOAD_TEMP_DIR": str(uploads),
        # an upload is streamed to a file in the workspace, never held in memory
        "FILE_UPLOAD_MAX_MEMORY_SIZE": 0,
        "FILE_UPLOAD_PERMISSIONS": 0o600,
        "DATA_UPLOAD_MAX_MEMORY_SIZE": 2 * 1024 * 1024,
        "GEOREVIEW_UPLOAD_LIMIT": UPLOAD_LIMIT_BYTES,
        "STATIC_URL": "/static/",
        "MESSAGE_STORAGE": "django.contrib.messages.storage.session.SessionStorage",
        "LOGGING": {
            "version": 1,
            "disable_existing_loggers": False,
            "handlers": {"stderr": {"class": "logging.StreamHandler"}},
            "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR"}},
        },
    }
    return out
