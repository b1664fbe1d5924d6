"""Merging an uploaded reviews file (the `export-reviews` format) into a run, as the Export page offers."""

from __future__ import annotations

import tempfile
from pathlib import Path

from audit.errors import AuditError
from audit.output_paths import write_new_file
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
    try:
        write_new_file(path, data)  # a full disk: "Nothing was imported. ... disk full"
        res = import_reviews(conn, run, path)
        local = (f" {res['stored_as_local']} signed-in identities in the file were stored as unverified local names."
                 if res.get("stored_as_local") else "")
        return True, (f"Imported {res['imported']} review rows; skipped {res['skipped_duplicates']} already "
                      f"present.{local}")
    except (InputError, AuditError) as e:
        return False, f"Nothing was imported. {str(e).replace(str(path), name)}"
    finally:
        path.unlink(missing_ok=True)
        path.parent.rmdir()
