"""Ordinance rule files (data): one TOML per municipality, plus optional parts."""
