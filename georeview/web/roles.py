"""Who may do what: the three roles of the workspace, as Django groups.

- **reviewer**: the Village's staff: every case, every action, screenings, the register.
- **admin**: a reviewer who also manages accounts (``georeview users``) and links a case
  opened at the counter to its applicant's account.
- **applicant**: opens cases by uploading a submission and sees only the cases linked to
  their account, without the Village's internal notes and audit trail.

A user with no role (or an inactive one) can sign in to nothing: every page asks for one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ROLES", "VILLAGE", "add_user", "context", "is_village", "role_of"]

#: Every role, in the order ``georeview users`` lists them.
ROLES = ("reviewer", "applicant", "admin")
#: The roles that act for the Village.
VILLAGE = ("reviewer", "admin")


def role_of(user: Any) -> str | None:
    """The user's role (``None`` for the anonymous, an inactive or a role-less user)."""
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return None
    cached = getattr(user, "_georeview_role", "")
    if cached != "":
        return cached
    names = set(user.groups.values_list("name", flat=True))
    role = next((r for r in ("admin", "reviewer", "applicant") if r in names), None)
    user._georeview_role = role
    return role


def is_village(user: Any) -> bool:
    """Whether the user acts for the Village (reviewer or admin)."""
    return role_of(user) in VILLAGE


def add_user(
    name: str, role: str, *, password: str | None, email: str = "", full_name: str = ""
) -> Any:
    """Create an account with one role; ``password=None`` leaves it to be set on first sign-in.

    Raises
    ------
    georeview.errors.InputError
        An unknown role, a name already taken, or a password the validators refuse.
    """
    from django.contrib.auth import get_user_model, password_validation
    from django.contrib.auth.models import Group
    from django.core.exceptions import ValidationError
    from django.db import transaction

    from georeview.errors import InputError

    if role not in ROLES:
        raise InputError(f"unknown role {role!r} (one of {', '.join(ROLES)})", field="--role")
    name = name.strip()
    if not name:
        raise InputError("a user needs a name", field="NAME")
    model = get_user_model()
    if model.objects.filter(username__iexact=name).exists():
        raise InputError(f"a user {name!r} exists already", field="NAME")
    first, _, last = full_name.strip().partition(" ")
    user = model(username=name, email=email, first_name=first, last_name=last)
    if password is None:
        user.set_unusable_password()
    else:
        try:
            password_validation.validate_password(password, user)
        except ValidationError as exc:
            raise InputError(" ".join(exc.messages), field="password") from None
        user.set_password(password)
    with transaction.atomic():
        user.save()
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def context(request: Any) -> dict[str, Any]:
    """Template context: the signed-in user's role (Django context processor)."""
    role = role_of(getattr(request, "user", None))
    return {"role": role, "is_village": role in VILLAGE}
