"""One collection run: its context, the pipeline, discovery, reading sources, capture, revisits, and events.

Imports core, net, parse and record.
"""
