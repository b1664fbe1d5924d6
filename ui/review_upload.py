"""Merging an uploaded reviews file (the `export-reviews` format) into a run, as the Export page offers."""

from __future__ import annotations

import tempfile
from pathlib import Path

from audit.errors import AuditError
from audit.review.reviews_io import import_reviews
from audit.store.database import Database
from scoring.errors import InputError
from ui import auth


def import_uploaded_reviews(conn: Database, run: object, name: str, data: bytes) -> tuple[bool, str]:
    """(imported, message): the upload is written to a private temp file under its own name (so errors name the
    user's file, never the temp path), merged, and removed."""
    if why := auth.refused("import_reviews"):
        return False, f"Nothing was imported. {why}"
    path = Path(tempfile.mkdtemp(prefix="rejudge-reviews-")) / Path(name).name
    path.write_bytes(data)
    try:
        res = import_reviews(conn, run, path)
        return True, f"Imported {res['imported']} review rows; skipped {res['skipped_duplicates']} already present."
    except (InputError, AuditError) as e:
        return False, f"Nothing was imported. {str(e).replace(str(path), name)}"
    finally:
        path.unlink(missing_ok=True)
        path.parent.rmdir()
