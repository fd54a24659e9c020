"""`python -m collector`: the command line."""

from .cli import main

main()
