"""The command line: every click command and the options they share; the only package that imports click.

Imports anything; library errors become click errors only here.
"""
