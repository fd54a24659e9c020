"""What the public sees: periods, figures, disclosure control and its audit, the static site, its words and charts.

Imports core, record and its own; never net/ (the site is built from what was recorded).
"""
