"""Annotations: interpretation by named people, signed, kept apart from the record.

The database holds observations only, and nothing here writes to it (it is
opened read-only). An annotation is what one named person says an event means;
a review is a second person's signed verdict on an annotation, required
before any use. Each is a file under data/annotations/: `<id>.json` beside its
SSH signature `<id>.json.sig` (`ssh-keygen -Y sign`, namespace
takedownwatch-annotation). Who may sign is data/annotations/allowed_signers,
in ssh-keygen's ALLOWED SIGNERS format. An annotation copies the event it
interprets and its digest, so it still says what it was about if read
without the database, and a reviewer signs the digest of the exact annotation.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
from pathlib import Path

from collector.errors import BadArgument, TakedownWatchError
from collector.evidence import sshsig

NAMESPACE = "takedownwatch-annotation"
DEFAULT_DIR = "data/annotations"
SIGNERS_FILE = "allowed_signers"
VERDICTS = ("approved", "rejected")
# A principal is matched against patterns in allowed_signers; a plain name
# keeps '*', '?', ',' and spaces out of it and out of file contents.
AUTHOR = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}\Z")


class AnnotationError(TakedownWatchError):
    """An annotation could not be written, signed or verified."""


# -- ssh-keygen (collector/evidence/sshsig.py, under the annotations' namespace) ---------

def ssh_keygen() -> str:
    """Return the path of ssh-keygen (OpenSSH 8.0 or later signs files)."""
    try:
        return sshsig.ssh_keygen()
    except sshsig.SignatureError as exc:
        raise AnnotationError(f"{exc} to sign and verify annotations") from exc


def sign(path: Path, key: str | Path) -> Path:
    """Return the path of the signature ssh-keygen writes beside `path`."""
    try:
        return sshsig.sign(path, key, NAMESPACE)
    except sshsig.SignatureError as exc:
        raise AnnotationError(str(exc)) from exc


def verify(path: Path, principal: str, allowed_signers: Path) -> str:
    """Return the signing key's fingerprint when `path`.sig is a good signature by `principal`."""
    try:
        return sshsig.verify(path, principal, allowed_signers, NAMESPACE)
    except sshsig.SignatureError as exc:
        raise AnnotationError(str(exc)) from exc


# -- documents -------------------------------------------------------------------------

def encode(document: dict) -> bytes:
    """Return the bytes an annotation or review is stored (and signed) as."""
    return json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True).encode() + b"\n"


def digest(value) -> str:
    """Return the sha256 of a JSON value in a canonical form."""
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def event_record(conn, event_id: int) -> dict:
    """Return the event with its article's address and outlet, as the record holds it."""
    row = conn.execute("SELECT e.*, a.url AS article_url, a.outlet_id FROM events e "
                       "JOIN articles a ON a.id = e.article_id WHERE e.id = ?", (event_id,)).fetchone()
    if row is None:
        raise AnnotationError(f"there is no event {event_id} in the record")
    return dict(row)


def new_id(kind: str, when) -> str:
    """Return a fresh id such as 'annotation-20260101T000700Z-3f9a0c12'."""
    return f"{kind}-{when:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


def check_author(author: str) -> str:
    """Return the author name, refusing names that are not plain principals."""
    if not AUTHOR.match(author):
        raise BadArgument("letters, digits and . _ @ + - only", option="--author")
    return author


def write_signed(directory: Path, document: dict, key: str, signers: Path,
                 refused_key: str | None = None) -> tuple[Path, str]:
    """Return (path, key fingerprint) of a document written, signed and verified.

    Nothing reaches `directory` unless the signature verifies, so a failed
    attempt leaves no file behind.
    """
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".pending-", dir=directory))
    name = f"{document['id']}.json"
    try:
        draft = staging / name
        draft.write_bytes(encode(document))
        sign(draft, key)
        fingerprint = verify(draft, document["author"], signers)
        if refused_key is not None and fingerprint == refused_key:
            raise AnnotationError(f"{document['author']} signed with the annotation's own key ({fingerprint}): "
                                  "a review needs a second person's key")
        os.replace(f"{draft}.sig", directory / f"{name}.sig")
        os.replace(draft, directory / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory / name, fingerprint


def find(directory: Path, reference: str) -> Path:
    """Return the path of the annotation named by id or by path."""
    for candidate in (Path(reference), directory / reference, directory / f"{reference}.json"):
        if candidate.is_file() and candidate.suffix == ".json":
            return candidate
    raise AnnotationError(f"no annotation {reference} in {directory}")


# -- verification of the whole folder --------------------------------------------------------

def verify_file(path: Path, signers: Path, conn=None) -> str:
    """Return 'author fingerprint' for a file that verifies in every respect; raise otherwise."""
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise AnnotationError(f"{path.name}: not readable JSON: {exc}") from exc
    if document.get("id") != path.stem or document.get("kind") not in ("annotation", "review"):
        raise AnnotationError(f"{path.name}: not an annotation or review named by its id")
    fingerprint = verify(path, document.get("author", ""), signers)
    if document["kind"] == "review":
        _check_review(path.parent, document, fingerprint, signers)
    elif conn is not None and digest(event_record(conn, document["event_id"])) != document["event_sha256"]:
        raise AnnotationError(f"{path.name}: event {document['event_id']} in the record is not the event annotated")
    return f"{document['author']} {fingerprint}"


def _check_review(directory: Path, review: dict, fingerprint: str, signers: Path) -> None:
    """Raise unless the review names an annotation here, unchanged, by another person and key."""
    target = directory / f"{review['annotation_id']}.json"
    if not target.is_file():
        raise AnnotationError(f"{review['id']}: reviews {review['annotation_id']}, which is not here")
    if hashlib.sha256(target.read_bytes()).hexdigest() != review["annotation_sha256"]:
        raise AnnotationError(f"{review['id']}: {target.name} is no longer the annotation that was reviewed")
    annotation = json.loads(target.read_bytes())
    if annotation["author"] == review["author"] or verify(target, annotation["author"], signers) == fingerprint:
        raise AnnotationError(f"{review['id']}: reviewed by the annotation's own author or key")


def verify_all(directory: Path, signers: Path, conn=None) -> list[tuple[str, str, bool]]:
    """Return (file name, what was found, verified?) for every annotation, review and stray signature."""
    results = []
    for path in sorted(directory.glob("*.json")):
        try:
            results.append((path.name, verify_file(path, signers, conn), True))
        except AnnotationError as exc:
            results.append((path.name, str(exc), False))
        except (KeyError, TypeError, ValueError) as exc:  # a field missing or mistyped: not verified
            results.append((path.name, f"malformed: {type(exc).__name__}: {exc}", False))
    for signature in sorted(directory.glob("*.sig")):
        if not signature.with_suffix("").exists():
            results.append((signature.name, "a signature without its file", False))
    return results
