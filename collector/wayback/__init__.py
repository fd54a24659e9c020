"""The Internet Archive: the Save Page Now client and the archive job that submits captures and confirms copies.

Imports core, net (through the run context), collect.context and record.
"""
