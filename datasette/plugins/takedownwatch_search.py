"""Search in the record finds a word however it is typed, and is never silently ignored.

The record's index holds each headline and text folded (collector/record/search.py:
NFC, joiners folded, space/quote/dash variants unified), so every query must be
folded the same way before FTS5 sees it. Datasette's own search
(datasette/filters.py, search_filters) puts the query in the parameters
`search` (for ?_search=) or `search_<n>` (for ?_search_<column>=) and matches
`escape_fts(:search)`, or `:search` itself with ?_searchmode=raw; filters
hooks run in turn and each one's params update the same dict
(datasette/views/table.py). This hook runs last (pluggy's trylast) and puts the
folded query under those names, so the search box, ?_search= and
?_search_<column>= in either mode all search the folded index, and the page
still shows the query as typed. Canned queries call `search_match(:words)`,
registered on every connection with `search_fold` (prepare_connection,
docs/plugin_hooks.rst).

Datasette itself ignores ?_search= on a table or view with no full-text index
and shows every row (datasette/filters.py: no fts_table, no clause). Here that
is a 400 naming the tables that can be searched: a search that matches nothing
must never look like one that matched everything. Likewise ?_search_<column>=
on a view (such as snapshots): Datasette matches it by rowid, which a view's
rows lack, so it would silently find nothing; it is a 400 pointing at
?_search= and the FTS5 column filter.
"""

from __future__ import annotations

from datasette import hookimpl
from datasette.filters import FilterArguments
from datasette.utils.asgi import BadRequest

from collector.parse.textnorm import fold_for_search
from collector.record import search
from collector.record.tables import is_record


@hookimpl
def prepare_connection(conn, database, datasette):
    search.register_functions(conn)


def _search_keys(request) -> list[str]:
    """Return the ?_search... arguments in Datasette's own order (the order its parameters are numbered by)."""
    return [key for key in request.args if key.startswith("_search") and key != "_searchmode"]


async def _fts_table(request, datasette, database: str, table: str) -> str | None:
    """Return the full-text index Datasette searches for this table, as datasette/filters.py finds it."""
    found = request.args.get("_fts_table") or datasette.table_metadata(database, table).get("fts_table")
    return found or await datasette.get_database(database).fts_table(table)


def _searchable(datasette, database: str) -> list[str]:
    """Return the tables of a database that its metadata gives a full-text index."""
    tables = ((datasette.metadata("databases") or {}).get(database) or {}).get("tables") or {}
    return sorted(name for name, about in tables.items() if isinstance(about, dict) and about.get("fts_table"))


@hookimpl(trylast=True)
def filters_from_request(request, database, table, datasette):
    keys = _search_keys(request)
    if not keys:
        return None

    async def inner():
        if not await _fts_table(request, datasette, database, table):
            others = ", ".join(_searchable(datasette, database)) or "none"
            raise BadRequest(f"{table} has no full-text index, so {keys[0]}= cannot be applied "
                             f"(tables that can be searched: {others})")
        db = datasette.get_database(database)
        if "_search" not in keys and await db.get_view_definition(table):
            # datasette/filters.py matches ?_search_<column>= by rowid, which a view's rows do not have
            # (SQLite gives NULL): it would find nothing, silently.
            raise BadRequest(f"{table} is a view: {keys[0]}= cannot search one of its columns. Use ?_search=, "
                             f"or ?_search=<column> : \"word\" with ?_searchmode=raw")
        if db.is_memory or not db.path or not is_record(str(db.path)):
            return None  # another database's index was not folded: its queries stay as typed
        if "_search" in keys:
            params = {"search": fold_for_search(request.args["_search"])}
        else:
            params = {f"search_{i}": fold_for_search(request.args[key]) for i, key in enumerate(keys)}
        return FilterArguments([], params=params)

    return inner
