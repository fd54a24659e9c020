"""`python -m collector`: the command line."""

from collector.cli.main import main

main()
