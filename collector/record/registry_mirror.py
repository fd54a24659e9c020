"""Mirrors the registry file into the database; nothing is ever deleted."""

from __future__ import annotations

import json

from collector.clock import Clock
from collector.registry import Registry
from collector.record.store import Store


def sync_registry(store: Store, registry: Registry, clock: Clock) -> dict[str, int]:
    """Return counts of outlets added, kept and made inactive by this sync."""
    now = clock.now_iso()
    counts = {"added": 0, "active": 0, "inactive": 0}
    with store.transaction() as conn:
        for group in registry.groups.values():
            conn.execute(
                "INSERT INTO outlet_groups (id, name, name_bn) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET name = excluded.name, name_bn = excluded.name_bn",
                (group.id, group.name, group.name_bn))
        known = {row[0] for row in conn.execute("SELECT id FROM outlets")}
        for outlet in registry.outlets.values():
            if outlet.id not in known:
                counts["added"] += 1
            counts["active"] += 1
            conn.execute(
                "INSERT INTO outlets (id, name, name_bn, homepage, language, group_id, "
                "operator_sources, active, first_seen_at, last_synced_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "name = excluded.name, name_bn = excluded.name_bn, homepage = excluded.homepage, "
                "language = excluded.language, group_id = excluded.group_id, "
                "operator_sources = excluded.operator_sources, active = 1, "
                "last_synced_at = excluded.last_synced_at",
                (outlet.id, outlet.name, outlet.name_bn, outlet.homepage, outlet.language,
                 outlet.group, json.dumps(list(outlet.sources)), now, now))
        # An outlet removed from the file stays, marked inactive: its record remains.
        gone = known - set(registry.outlets)
        for outlet_id in gone:
            conn.execute("UPDATE outlets SET active = 0, last_synced_at = ? WHERE id = ?",
                         (now, outlet_id))
        counts["inactive"] = len(gone)
    return counts
