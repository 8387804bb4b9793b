"""Redis checkpoint savers (issue 3; this placeholder keeps the package buildable)."""

__all__: list[str] = []
