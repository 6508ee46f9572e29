"""reviewbot: a self-hostable pull-request review bot."""

__version__ = "0.1.0"
