"""Health checks: is the collection doing its job? (`python -m collector health`, docs/health.md).

Every job passes even when every site failed (failures are data); these
checks say when the collection quietly stops doing its job. Each check has an
id (docs/health.md#<id> is its runbook), thresholds in collector/settings.py,
and gives one finding per subject it judges (an outlet, a stream's job kind,
an authority, or the whole record) with a state: ok, warn or fail.
"""
