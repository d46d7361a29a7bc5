"""The workspace's URLs. Every one but sign-in needs a signed-in user with a role."""

from __future__ import annotations

from django.contrib.auth import views as auth
from django.urls import path
from django.views.generic.base import RedirectView

from georeview.web import files, views

handler403 = "georeview.web.views.forbidden"
handler404 = "georeview.web.views.not_found"

_C = "cases/<str:number>/"

urlpatterns = [
    # public: browsers ask for it on every page, the review's own pages included
    path(
        "favicon.ico",
        RedirectView.as_view(url="/static/web/favicon.svg", permanent=True),
        name="favicon",
    ),
    path("login/", auth.LoginView.as_view(template_name="web/login.html"), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path(
        "password/",
        auth.PasswordChangeView.as_view(template_name="web/password.html", success_url="/"),
        name="password",
    ),
    path(
        "welcome/<uidb64>/<token>/",
        auth.PasswordResetConfirmView.as_view(
            template_name="web/password.html", success_url="/login/", post_reset_login=False
        ),
        name="welcome",
    ),
    path("", views.home, name="home"),
    path("cases/", views.queue, name="queue"),
    path("cases/new/", views.new_case, name="new_case"),
    path(_C, views.case_page, name="case"),
    path(_C + "resubmit/", views.resubmit, name="resubmit"),
    path(_C + "withdraw/", views.withdraw, name="withdraw"),
    path(_C + "review/", views.review_again, name="review_again"),
    path(_C + "determine/", views.determine, name="determine"),
    path(_C + "actions/", views.action_add, name="action_add"),
    path(_C + "actions/<int:action>/resolve/", views.action_resolve, name="action_resolve"),
    path(_C + "decide/", views.decide, name="decide"),
    path(_C + "issue/", views.issue, name="issue"),
    path(_C + "payments/", views.payment, name="payment"),
    path(_C + "owner/", views.set_owner, name="set_owner"),
    path(_C + "inspections/", views.inspections, name="inspections"),
    path(_C + "diff/<int:before>/<int:after>/", views.diff_page, name="diff"),
    path(_C + "audit/", views.audit_page, name="audit"),
    path(_C + "rounds/<int:round_number>/files/<path:path>", files.round_file, name="round_file"),
    path(
        _C + "rounds/<int:round_number>/reviews/<int:review_number>/<str:name>",
        files.review_file,
        name="review_file",
    ),
    path(_C + "letters/<int:letter_number>.<str:ext>", files.letter_file, name="letter_file"),
    path(
        _C + "inspections/<int:check_number>/<str:name>",
        files.inspection_file,
        name="inspection_file",
    ),
    path("register/map/", views.register_map, name="register_map"),
    path("register/sites.geojson", views.register_sites, name="register_sites"),
    path("register/limits.geojson", views.register_limits, name="register_limits"),
    path("jobs/<int:job_id>.json", views.job_status, name="job"),
    path("screenings/", views.screens, name="screens"),
    path("screenings/new/", views.screen_new, name="screen_new"),
    path("screenings/<int:job_id>/", views.screen_page, name="screen"),
    path("screenings/<int:job_id>/<str:name>", files.screen_file, name="screen_file"),
]
