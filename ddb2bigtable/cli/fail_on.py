"""`--fail-on` of every command that has one: the rules that tripped on stderr, then exit 1."""

from __future__ import annotations

import sys

import click


def exit_if_tripped(lines: list[str]) -> None:
    """Print each tripped rule (one line each, with its figure) to stderr and exit 1; nothing when
    none tripped. stderr, so that stdout stays the report in the format asked for."""
    for line in lines:
        click.echo(line, err=True)
    if lines:
        sys.exit(1)
