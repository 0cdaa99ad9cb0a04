"""What every command shares: how bad input is reported and which exit code it gets."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from ..spec.errors import InputError

EXIT_BAD_INPUT = 2


def fail(error: InputError) -> NoReturn:
    for problem in error.problems:
        click.echo(str(problem), err=True)
    count = len(error.problems)
    click.echo(f"{count} problem{'s' if count != 1 else ''} found; nothing was planned or written.", err=True)
    sys.exit(EXIT_BAD_INPUT)
