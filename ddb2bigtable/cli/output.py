"""What every command shares: how an engine error is reported and which exit code it gets."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from ..spec.errors import Ddb2BigtableError, InputError


def report_error(error: Ddb2BigtableError) -> NoReturn:
    """Bad input as one located line per problem (exit 2); any other engine error as its
    message, which says what to do (its class's exit code). Never a traceback."""
    if isinstance(error, InputError):
        for problem in error.problems:
            click.echo(str(problem), err=True)
        count = len(error.problems)
        click.echo(f"{count} problem{'s' if count != 1 else ''} found; nothing was planned or written.", err=True)
    else:
        click.echo(f"error: {error}", err=True)
    sys.exit(error.exit_code)
