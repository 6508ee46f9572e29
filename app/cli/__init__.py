"""The ``reviewbot`` command line: ``run`` (the command and running the bot), ``ci`` (the
CI mode), ``admin`` (setting it up and looking after it), ``render`` (how results print);
each imports only those after it."""

from app.cli.run import cli, main

__all__ = ["cli", "main"]
