"""The ``langgraph-durable`` command line (top floor: nothing imports it)."""

from __future__ import annotations

import click


@click.group()
@click.version_option(package_name="langgraph-durable")
def main() -> None:
    """Operate LangGraph threads stored by langgraph-durable savers."""


if __name__ == "__main__":
    main()
