"""Where the CLI and the dashboard may write a file, and writing it whole: the one rule for every output path.

An output path is refused when it is (resolved through links, relative paths and hard links) the database or one of
its journal files (-wal, -shm, -journal), an input of the command (gold, predictions, judge log, a results file)
or a file whose content is an input recorded for the run (by SHA-256), any SQLite database (another Rejudge
database: not even with `force`), a folder, or an existing file without `force`. A file is written to a
temporary file in the same folder, flushed to disk and renamed over the target, so a full disk or a kill leaves the
old file (or none), never half of a new one. A character device (`/dev/stdout`)
cannot be replaced and is written directly.

Errors name the path and the cause (`disk full`, `no permission`, ...), as `AuditError` (exit status 2).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from audit.errors import AuditError

DB_SIDECARS = ("", "-wal", "-shm", "-journal")

OPTION_FLAGS = ("--out", "--exported", "--judge-log", "--figures")
"""The CLI options that name a file (or folder) the command writes: each is checked here (tests walk the parser)."""

CAUSES = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "no permission to write there",
    errno.EPERM: "no permission to write there",
    errno.EROFS: "read-only file system",
    errno.EISDIR: "is a folder; give a file name",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ENOENT: "the folder does not exist",
    errno.ENAMETOOLONG: "file name too long",
    errno.EFBIG: "file too large for this file system",
    errno.EIO: "input/output error on the disk",
}


def cause(e: OSError) -> str:
    """The cause of a failed write, in words ("disk full" for ENOSPC)."""
    return CAUSES.get(e.errno or 0, e.strerror or str(e))


@dataclass(frozen=True)
class OutputRule:
    """What a command may not overwrite: its database, its inputs (paths and recorded SHA-256 digests)."""

    db: str | Path | None = None
    inputs: tuple[str | Path, ...] = ()
    input_digests: frozenset[str] = field(default_factory=frozenset)
    force: bool = False
    force_hint: str = "or pass --force to replace it"
    """How this command replaces an existing file (delete-run's --force means something else: it has none)."""

    def check(self, path: str | Path, option: str = "--out") -> Path:
        """Refuse a path this command must not write (see the module docstring); returns it as a Path."""
        return check_output(path, option, self)

    def write(self, path: str | Path, data: str | bytes, option: str = "--out") -> Path:
        return write_output(path, data, option, self)


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file: equal once resolved, or one inode (hard links)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _digest(p: Path) -> str | None:
    try:
        with p.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def protected(rule: OutputRule) -> Iterable[tuple[Path, str]]:
    """(path, what it is) for every file the rule protects by name."""
    if rule.db is not None and str(rule.db) not in ("", ":memory:"):
        for s in DB_SIDECARS:
            yield Path(f"{rule.db}{s}"), "the database" if not s else f"the database's {s[1:]} file"
    for p in rule.inputs:
        if p:
            yield Path(p), "an input of this command"


def check_output(path: str | Path, option: str, rule: OutputRule) -> Path:
    """Refuse an output path before any work is done (so nothing is half done). See the module docstring.

    Raises:
        AuditError: naming the path, the option and why.
    """
    p = Path(path)
    if not str(path).strip():
        raise AuditError(f"{option} is empty; give a file name")
    for other, what in protected(rule):
        if _same(p, other):
            raise AuditError(f"{p}: {option} is {what} ({other}); writing there would destroy it: give another "
                             "file name")
    if p.is_dir():
        raise AuditError(f"{p}: {option} is a folder; give a file name")
    parent = p.parent
    if not parent.is_dir():
        raise AuditError(f"{p}: {option}: the folder {parent} does not exist")
    if p.is_symlink() and not p.exists():
        raise AuditError(f"{p}: {option} is a link to a missing file ({os.readlink(p)}); give another file name")
    if p.exists():
        try:
            st = p.stat()
        except OSError as e:
            raise AuditError(f"{p}: {option}: {cause(e)}") from None
        if stat.S_ISREG(st.st_mode) and rule.input_digests and _digest(p) in rule.input_digests:
            raise AuditError(f"{p}: {option} holds an input of this run (same SHA-256); writing there would destroy "
                             "it: give another file name")
        if stat.S_ISREG(st.st_mode) and _is_sqlite(p):
            raise AuditError(f"{p}: {option} is an SQLite database (another Rejudge database?); no output replaces "
                             "one, --force or not: give another file name")
        if not rule.force:
            hint = f", {rule.force_hint}" if rule.force_hint else ""
            raise AuditError(f"{p}: {option}: the file exists; give another name{hint}")
        if not os.access(p, os.W_OK):
            raise AuditError(f"{p}: {option}: no permission to write there")
    regular = not p.exists() or stat.S_ISREG(p.stat().st_mode)  # a device is written in place, not beside
    if regular and not os.access(parent, os.W_OK | os.X_OK):
        raise AuditError(f"{p}: {option}: no permission to write in {parent}")
    return p


SQLITE_HEADER = b"SQLite format 3\x00"


def _is_sqlite(p: Path) -> bool:
    """Whether the file starts with SQLite's header: a database, whose reviews no export may write over."""
    try:
        with p.open("rb") as f:
            return f.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


class Staged:
    """A file written to a temporary name beside its target: `commit()` renames it over the target, `discard()`
    removes it. Used to write first and make the file appear only once the rest succeeded (`score --judge-log`)."""

    def __init__(self, target: Path, tmp: Path | None, option: str) -> None:
        self.target, self.tmp, self.option = target, tmp, option

    def commit(self) -> Path:
        if self.tmp is not None:
            try:
                os.replace(self.tmp, self.target)
                _fsync_dir(self.target.parent)
            except OSError as e:
                self.discard()
                raise AuditError(f"{self.target}: {self.option}: cannot write ({cause(e)}); it was not changed") \
                    from None
            self.tmp = None
        return self.target

    def discard(self) -> None:
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
            self.tmp = None


def stage_output(path: str | Path, data: str | bytes, option: str, rule: OutputRule) -> Staged:
    """Check the path, then write `data` to a temporary file beside it (flushed to disk); nothing is at the target
    until `commit()`.

    Raises:
        AuditError: the path is refused, or the write failed (the cause named; the temporary file is removed).
    """
    p = check_output(path, option, rule)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if p.exists() and not stat.S_ISREG(p.stat().st_mode):  # a device or pipe (e.g. /dev/stdout): written directly
        try:
            with p.open("wb") as f:
                f.write(raw)
        except OSError as e:
            raise AuditError(f"{p}: {option}: cannot write ({cause(e)})") from None
        return Staged(p, None, option)
    import tempfile  # here, not above: `--help` and `runs` build the CLI's parser, which imports this module (#38)

    fd, name = tempfile.mkstemp(prefix=f".{p.name[:100]}.", suffix=".tmp", dir=p.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        if p.exists():
            os.chmod(tmp, stat.S_IMODE(p.stat().st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        was = "it was not changed" if p.exists() else "nothing was written"
        raise AuditError(f"{p}: {option}: cannot write ({cause(e)}); {was}") from None
    return Staged(p, tmp, option)


def write_output(path: str | Path, data: str | bytes, option: str, rule: OutputRule) -> Path:
    """Check the path and write `data` there whole (temporary file, fsync, rename). Returns the path written.

    Raises:
        AuditError: the path is refused, or the write failed (the cause named; the target is unchanged).
    """
    return stage_output(path, data, option, rule).commit()


def write_new_file(path: str | Path, data: bytes, *, replace: bool = False) -> Path:
    """Write a file into a private temporary folder (a dashboard upload kept while it is read): the same checks and
    whole-file write as every output."""
    return write_output(path, data, "upload", OutputRule(force=replace))


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
