"""Pure parsing of bytes already fetched: listings, feed links, HTML decoding, article extraction, text normalisation.

Imports only core modules and its own: no network, no database.
"""
