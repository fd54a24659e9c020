"""A record that rolls over stays evidence: signed, timestamped and verified across its repositories."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from collector.clock import Clock
from collector.collect.context import RunContext
from collector.evidence.signing import sign_verified
from collector.evidence.timestamps import load_authorities, stamp_missing
from collector.evidence.verify import VerificationFailed, verify_record
from collector.record import rollover
from collector.record.export import export_new
from collector.record.folder import batches, record_name
from collector.record.store import Store
from tests.evidence.test_tamper import build_record
from tests.record.test_export import TEXT, _article, _run, _snapshot


def test_a_new_periods_repository_starts_with_the_last_files_signature_and_tokens(tmp_path, farm):
    old = build_record(tmp_path / "2026", farm, files=3)
    new = tmp_path / "record-2027"
    new.mkdir()
    seed = rollover.seed(old.out, new, "o/tw-record-2026", datetime(2027, 1, 1, tzinfo=timezone.utc))
    companions = sorted(p.name[len(seed.name):] for p in seed.parent.iterdir() if p.name != seed.name)
    assert companions == sorted(p.name[len(seed.name):] for p in batches(old.out)[-1].parent.iterdir()
                                if p.name.startswith(batches(old.out)[-1].name + "."))
    assert ".sig" in companions and len([c for c in companions if c.endswith(".tsr")]) == 2
    store = Store(old.db)
    stamper = RunContext.open(store, "timestamp", clock=Clock(), vantage="v", warc_dir=tmp_path / "warc",
                              interval=0.01, allow_loopback=True)
    for n in range(2):  # two more files, written, signed and stamped into the new period's repository
        run = _run(store)
        _snapshot(store, run, _article(store, run, 10 + n), TEXT + f" {n}")
        store.insert("run_finishes", {"run_id": run, "finished_at": "t", "counts": "{}"})
        assert export_new(store, new).path is not None
        assert [record_name(p) for p in sign_verified(new, old.key, old.trust / "allowed_signers", store.conn)] == \
            [record_name(batches(new)[-1])]  # the copy came signed
        assert len(stamp_missing(stamper.fetcher, new, load_authorities(old.trust)).kept) == 2
    stamper.warc.close()
    store.close()
    both = verify_record([old.out, new], old.trust, db=old.db, require_timestamps=True)
    assert both.files == both.signed == 5 and len(both.tokens) == 10 and both.awaiting == []
    alone = verify_record(new, old.trust, require_timestamps=True)
    assert alone.files == alone.signed == 3
    seed.with_name(seed.name + ".sig").unlink()  # the copy without its signature is not the record's
    with pytest.raises(VerificationFailed):
        verify_record(new, old.trust)
