"""Evidence around the record: signatures of export files, RFC 3161 timestamps, WACZ packages, bundles.

Imports core, record and net (a timestamp request goes through the one polite fetcher); never cli.
"""
