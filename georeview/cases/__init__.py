"""The Village's record of a review: cases, rounds, determinations, decisions and letters.

A Django application (:mod:`georeview.cases.models`) behind one interface: open the
workspace (:func:`georeview.cases.store.open_workspace`), then change a case only through
:mod:`georeview.cases.service` and read it through :mod:`georeview.cases.views`. The
command line (``georeview case ...``) and the web workspace call the same functions.
Needs the ``workspace`` extra (``pip install "georeview[workspace]"``): importing this
package imports no Django; opening a workspace does.
"""
