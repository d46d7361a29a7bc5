"""Procedure: review deadlines, fees and forfeitures, and the inspection log check."""
