"""Interrupt helpers: approvals with deadlines, batches, compensation, activities."""

__all__: list[str] = []
