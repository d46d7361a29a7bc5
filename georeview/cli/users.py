"""``georeview users add|list|set-password|disable``: the web workspace's accounts."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from georeview.cli.options import need_web, need_workspace, workspace_arguments
from georeview.errors import InputError

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``georeview users ACTION``."""
    sub = parser.add_subparsers(dest="action", required=True)
    a = sub.add_parser("add", help="add an account with one role")
    a.add_argument("name")
    a.add_argument("--role", required=True, choices=("reviewer", "applicant", "admin"))
    a.add_argument("--email", default="")
    a.add_argument("--full-name", default="")
    a.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from standard input (scripts); default: prompted",
    )
    a.add_argument(
        "--set-on-first-login",
        action="store_true",
        help="no password now: print a one-time link where the user sets it",
    )
    a.add_argument(
        "--url", default="http://127.0.0.1:8000", help="the server's address, for the link"
    )
    sp = sub.add_parser("set-password", help="a new password (prompted or --password-stdin)")
    sp.add_argument("name")
    sp.add_argument("--password-stdin", action="store_true")
    d = sub.add_parser("disable", help="disable an account (its record stays)")
    d.add_argument("name")
    sub.add_parser("list", help="every account and its role")
    for p in (a, sp, d, sub.choices["list"]):
        workspace_arguments(p)


def _password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise InputError("the two passwords differ", field="password")
    return first


def _user(name: str) -> Any:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(username__iexact=name).first()
    if user is None:
        raise InputError(f"no user {name!r}", field="NAME")
    return user


def _welcome_link(user: Any, base: str) -> str:
    from django.contrib.auth.tokens import default_token_generator
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return f"{base.rstrip('/')}/welcome/{uid}/{default_token_generator.make_token(user)}/"


def main(args: argparse.Namespace) -> int:
    """Run one users action."""
    need_web("users")
    from georeview.web.roles import add_user, role_of
    from georeview.web.server import configure

    configure(need_workspace(args), args.database)
    if args.action == "add":
        password = None if args.set_on_first_login else _password(args)
        user = add_user(
            args.name, args.role, password=password, email=args.email, full_name=args.full_name
        )
        print(f"added {user.username} ({args.role})")
        if password is None:
            print(f"set the password once at: {_welcome_link(user, args.url)}")
    elif args.action == "set-password":
        from django.contrib.auth import password_validation
        from django.core.exceptions import ValidationError

        user = _user(args.name)
        password = _password(args)
        try:
            password_validation.validate_password(password, user)
        except ValidationError as exc:
            raise InputError(" ".join(exc.messages), field="password") from None
        user.set_password(password)
        user.save()
        print(f"password of {user.username} changed")
    elif args.action == "disable":
        user = _user(args.name)
        user.is_active = False
        user.save()
        print(f"{user.username} disabled")
    else:
        from django.contrib.auth import get_user_model

        for user in get_user_model().objects.order_by("username"):
            state = "" if user.is_active else " (disabled)"
            print(f"{user.username}\t{role_of(user) or '-'}{state}")
    return 0
