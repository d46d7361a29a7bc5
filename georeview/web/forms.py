"""The workspace's forms: Django forms, so every field is validated and every value escaped."""

from __future__ import annotations

from typing import Any, ClassVar

from django import forms

__all__ = [
    "ActionForm",
    "DecideForm",
    "DeterminationForm",
    "InspectionsForm",
    "PaymentForm",
    "ScreenForm",
    "UploadForm",
]

_ZIP_HELP = "a zip of the submission folder (submission.toml and its files)"


class UploadForm(forms.Form):
    """A submission zip (a new case or a resubmission)."""

    submission = forms.FileField(help_text=_ZIP_HELP)

    def clean_submission(self) -> Any:
        """Only a .zip is taken (the batch checks then read inside it)."""
        f = self.cleaned_data["submission"]
        if not f.name.lower().endswith(".zip"):
            raise forms.ValidationError("upload the submission as a .zip file")
        return f


class ActionForm(forms.Form):
    """A comment, condition, internal note or "verified on sheet" on a finding."""

    KINDS: ClassVar[list[tuple[str, str]]] = [
        ("comment", "Comment to the applicant"),
        ("condition", "Condition of approval"),
        ("note", "Internal note (never shown to the applicant)"),
        ("verified", "Verified on the sheet"),
    ]
    kind = forms.ChoiceField(choices=KINDS)
    rule_id = forms.CharField(max_length=160, required=False)
    sheet = forms.CharField(max_length=120, required=False)
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), max_length=5000, required=False
    )
    revision = forms.IntegerField(widget=forms.HiddenInput)


class DeterminationForm(forms.Form):
    """One of the Village's determinations: the fact, its value (as the fact's type), why."""

    fact = forms.CharField(max_length=120)
    value = forms.CharField(max_length=500)
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=5000)
    decided_by = forms.CharField(max_length=200, required=False)
    revision = forms.IntegerField(widget=forms.HiddenInput)


class DecideForm(forms.Form):
    """The Village's decision on the current round; its letter is written with it."""

    OUTCOMES: ClassVar[list[tuple[str, str]]] = [
        ("returned", "Return to the applicant (comment letter)"),
        ("approved", "Approve"),
        ("approved_with_conditions", "Approve with conditions"),
        ("disapproved", "Disapprove"),
    ]
    outcome = forms.ChoiceField(choices=OUTCOMES)
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), max_length=5000, required=False
    )
    revision = forms.IntegerField(widget=forms.HiddenInput)


class PaymentForm(forms.Form):
    """A fee paid or a security received."""

    kind = forms.ChoiceField(choices=[("fee", "Fee"), ("security", "Security")])
    amount_usd = forms.DecimalField(max_digits=12, decimal_places=2, min_value=0)
    received_on = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    note = forms.CharField(max_length=300, required=False)


class InspectionsForm(forms.Form):
    """An approved case's inspection log and rain data (CSV)."""

    log = forms.FileField(help_text="inspection log CSV: date, inspector, phase")
    rain = forms.FileField(help_text="daily rainfall CSV: date, rain_in")


class ScreenForm(forms.Form):
    """A parcel file to screen against one municipality's layers."""

    parcels = forms.FileField(
        help_text="parcel polygons: a GeoPackage, GeoJSON, FlatGeobuf, GeoParquet, or a zip"
        " of a shapefile"
    )
    municipality = forms.ChoiceField(choices=[])
    assume = forms.CharField(max_length=200, initial="disturb=whole")

    def __init__(self, *args: Any, municipalities: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["municipality"].choices = [(m, m.title()) for m in municipalities]
