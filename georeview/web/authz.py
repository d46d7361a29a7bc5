"""Every page's and every file's check: may this user see this case, or do this action.

A case a user may not see answers 404, exactly as a case that does not exist, so a case
number guessed tells nothing. A Village-only page answers 403 to an applicant. The
anonymous are sent to sign in (Django's ``login_required``) before either check.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404

from georeview.web.roles import is_village, role_of

__all__ = ["applicant_or_village", "case_for", "village_only"]


def case_for(request: Any, number: str) -> Any:
    """The case ``number`` if the signed-in user may see it, else 404.

    The Village sees every case; an applicant only the cases linked to their account.
    """
    from georeview.cases.models import Case

    case = Case.objects.filter(number=str(number).strip().upper()).first()
    if case is None:
        raise Http404("no such case")
    if is_village(request.user):
        return case
    if role_of(request.user) == "applicant" and case.owner_id == request.user.id:
        return case
    raise Http404("no such case")


def village_only(view: Callable[..., Any]) -> Callable[..., Any]:
    """A view for the Village's reviewers and admins only (403 for anyone else signed in)."""

    @login_required
    @wraps(view)
    def wrapped(request: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_village(request.user):
            raise PermissionDenied("for the Village's reviewers")
        return view(request, *args, **kwargs)

    return wrapped


def applicant_or_village(view: Callable[..., Any]) -> Callable[..., Any]:
    """A view for any user with a role (the case check is :func:`case_for`)."""

    @login_required
    @wraps(view)
    def wrapped(request: Any, *args: Any, **kwargs: Any) -> Any:
        if role_of(request.user) is None:
            raise PermissionDenied("this account has no role in the workspace")
        return view(request, *args, **kwargs)

    return wrapped
