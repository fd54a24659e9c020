"""The people's side: review order of events and signed annotations, kept apart from the observations.

Imports core, record and evidence (the signing of files).
"""
