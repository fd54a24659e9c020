"""The network: the one polite fetcher, the wire, pacing, the address guard, robots.txt, Cloudflare, ledger, WARC.

Imports core modules and its own; writes to the database only through the ledger (net/ledger.py).
"""
