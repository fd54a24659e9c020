"""The record: the database (store, schema, migrations, search index), article identity, and the committed files (format, export, rebuild).

Imports core modules and its own; never the network.
"""
