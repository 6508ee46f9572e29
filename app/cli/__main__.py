"""``python -m app.cli``: the ``reviewbot`` command."""

from app.cli.run import main

if __name__ == "__main__":
    main()
