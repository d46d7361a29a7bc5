"""The review workspace in a browser: the Village reviews, its applicants submit (issue 26).

A Django app over the case store (:mod:`georeview.cases`): the same service functions the
``georeview case`` commands call, behind Django's own authentication, sessions and CSRF
protection. ``georeview serve`` runs it under waitress with worker processes for the
reviews and screenings (:mod:`georeview.web.jobs`); ``georeview users`` adds accounts.
"""
