"""Schema changes, one registered function each; `audit.store.open_db` applies the pending ones.

Never edit a migration that has been applied somewhere; add a new one.
"""

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("rejudge")
SCHEMA_VERSION = 8


@migrations()
def m001_initial(db: Database) -> None:
    db.execute("""CREATE TABLE runs (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, task TEXT NOT NULL, judge_spec TEXT NOT NULL,
        judge_identity TEXT NOT NULL, created TEXT NOT NULL, inputs TEXT NOT NULL, summary TEXT NOT NULL,
        original_metrics TEXT NOT NULL, original_counts TEXT NOT NULL, n_docs INTEGER NOT NULL,
        n_decisions INTEGER NOT NULL)""")
    db.execute("""CREATE TABLE documents (
        run_id INTEGER NOT NULL REFERENCES runs(id), doc_id TEXT NOT NULL, idx INTEGER NOT NULL,
        payload TEXT NOT NULL, counts TEXT NOT NULL, outcome TEXT NOT NULL, PRIMARY KEY (run_id, doc_id))""")
    db.execute("""CREATE TABLE decisions (
        id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), doc_id TEXT NOT NULL,
        kind TEXT NOT NULL, type TEXT NOT NULL, left TEXT NOT NULL, right TEXT NOT NULL,
        judge_label TEXT NOT NULL, detail TEXT NOT NULL)""")
    db.execute("CREATE UNIQUE INDEX decisions_natural ON decisions(run_id, doc_id, kind, type, left, right)")
    db.execute("""CREATE TABLE reviews (
        id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, run_id INTEGER NOT NULL REFERENCES runs(id),
        decision_id INTEGER NOT NULL REFERENCES decisions(id), reviewer TEXT NOT NULL, label TEXT,
        role TEXT NOT NULL DEFAULT 'reviewer', note TEXT, blind INTEGER NOT NULL DEFAULT 0,
        created TEXT NOT NULL)""")
    db.execute("CREATE INDEX reviews_run ON reviews(run_id, decision_id)")
    db.execute("""CREATE TABLE judge_cache (
        key TEXT PRIMARY KEY, judge TEXT NOT NULL, value TEXT NOT NULL, raw TEXT, rationale TEXT,
        score REAL, created TEXT NOT NULL)""")


@migrations()
def m002_incremental_audit(db: Database) -> None:
    """Index reviews by decision, and keep each run's audited state so a review re-counts only its document."""
    db.execute("CREATE INDEX reviews_decision ON reviews(decision_id, id)")
    db.execute("""CREATE TABLE audit_state (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id), last_review INTEGER NOT NULL, total TEXT NOT NULL)""")
    db.execute("""CREATE TABLE effective (
        decision_id INTEGER PRIMARY KEY REFERENCES decisions(id), run_id INTEGER NOT NULL, doc_id TEXT NOT NULL,
        judge_label TEXT NOT NULL, label TEXT NOT NULL, source TEXT NOT NULL, n_humans INTEGER NOT NULL)""")
    db.execute("CREATE INDEX effective_run ON effective(run_id, doc_id)")
    db.execute("""CREATE TABLE doc_audit (
        run_id INTEGER NOT NULL REFERENCES runs(id), doc_id TEXT NOT NULL, counts TEXT NOT NULL,
        outcome TEXT NOT NULL, PRIMARY KEY (run_id, doc_id))""")


@migrations()
def m003_judge_cache_provenance(db: Database) -> None:
    """Record with every cached judge call the prompt template's version hash, the request parameters and tokens."""
    for column, kind in (("prompt_hash", "TEXT"), ("params", "TEXT"), ("prompt_tokens", "INTEGER"),
                         ("completion_tokens", "INTEGER"), ("retries", "INTEGER")):
        db.execute(f"ALTER TABLE judge_cache ADD COLUMN {column} {kind}")


@migrations()
def m004_one_decision_per_question(db: Database) -> None:
    """Merge twin decisions: for decision kinds whose (left, right) is an unordered pair (the family's label scheme
    says `symmetric`), (x, y) and (y, x) of one document and type are one judge question. The lowest id is kept;
    reviews of a dropped twin move to it (so the reviewer's later review wins) and every reviewer whose twins
    carried different labels is reported in the run's summary (`migration_notes`). The judge labels of twins
    are equal by construction (the same two prompts), so the original counts stand; the audited state is
    rebuilt from the reviews."""
    import json

    runs = db.execute("SELECT id, task, summary FROM runs").fetchall()
    if not runs:
        return
    from audit.rescoring import apply_reviews
    from audit.reviews import current_labels
    from scoring.families import TASKS

    for run_id, task_name, summary in runs:
        task = TASKS.get(task_name)
        kinds = [k for k, s in (task.label_schemes.items() if task else []) if s.symmetric]
        groups: dict[tuple, list[int]] = {}
        for dec_id, doc, kind, typ, left, right in db.execute(
                f"SELECT id, doc_id, kind, type, left, right FROM decisions WHERE run_id = ? AND kind IN "
                f"({','.join('?' * len(kinds))}) ORDER BY id", [run_id, *kinds]).fetchall() if kinds else []:
            groups.setdefault((doc, kind, typ, frozenset((left, right))), []).append(dec_id)
        notes = []
        dropped = []
        for ids in (g for g in groups.values() if len(g) > 1):
            keep, rest = ids[0], ids[1:]
            labels_per_twin = []
            for i in ids:
                revs = [dict(zip(("reviewer", "label", "role"), r, strict=True)) for r in db.execute(
                    "SELECT reviewer, label, role FROM reviews WHERE decision_id = ? ORDER BY created, id", [i])]
                labels_per_twin.append(current_labels(revs)[0])
            for who in sorted({w for lab in labels_per_twin for w in lab}):
                seen = {lab[who] for lab in labels_per_twin if who in lab}
                if len(seen) > 1:
                    notes.append(f"decisions {', '.join(f'#{i}' for i in ids)} were one question; {who} labelled "
                                 f"them {' and '.join(sorted(seen))}: their later review now stands on #{keep}")
            marks = ",".join("?" * len(rest))
            db.execute(f"UPDATE reviews SET decision_id = ? WHERE decision_id IN ({marks})", [keep, *rest])
            db.execute(f"DELETE FROM effective WHERE decision_id IN ({marks})", rest)
            db.execute(f"DELETE FROM decisions WHERE id IN ({marks})", rest)
            dropped += rest
        if not dropped:
            continue
        data = json.loads(summary)
        data["migration_notes"] = data.get("migration_notes", []) + [
            f"m004: merged {len(dropped)} twin decision(s) into the decision they duplicated"] + notes
        db.execute("UPDATE runs SET summary = ?, n_decisions = (SELECT COUNT(*) FROM decisions WHERE run_id = ?) "
                   "WHERE id = ?", [json.dumps(data, ensure_ascii=False), run_id, run_id])
        db.execute("DELETE FROM audit_state WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM effective WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM doc_audit WHERE run_id = ?", [run_id])
        apply_reviews(db, run_id)


@migrations()
def m005_sampling_plans(db: Database) -> None:
    """Sampling plans for partial audits (one per run and decision kind), and whether a review came through one."""
    db.execute("""CREATE TABLE sampling_plans (
        id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), kind TEXT NOT NULL, seed INTEGER NOT NULL,
        created TEXT NOT NULL, plan TEXT NOT NULL, UNIQUE (run_id, kind))""")
    db.execute("ALTER TABLE reviews ADD COLUMN sampled INTEGER NOT NULL DEFAULT 0")


@migrations()
def m006_gold_errata(db: Database) -> None:
    """Gold errata: reviewers flag a wrong or missing gold item (append-only, like reviews)."""
    db.execute("""CREATE TABLE errata (
        id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, run_id INTEGER NOT NULL REFERENCES runs(id),
        doc_id TEXT NOT NULL, decision_id INTEGER REFERENCES decisions(id), item TEXT NOT NULL,
        problem TEXT NOT NULL, correction TEXT, note TEXT, reviewer TEXT NOT NULL, created TEXT NOT NULL,
        withdrawn INTEGER NOT NULL DEFAULT 0)""")
    db.execute("CREATE INDEX errata_run ON errata(run_id, doc_id)")


@migrations()
def m007_judge_stability(db: Database) -> None:
    """Repeated judge answers (stability checks): every answer of every re-ask, with its attempt number."""
    db.execute("""CREATE TABLE stability_answers (
        id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), check_name TEXT NOT NULL,
        decision_id INTEGER NOT NULL REFERENCES decisions(id), question TEXT NOT NULL, judge TEXT NOT NULL,
        attempt INTEGER NOT NULL, value TEXT NOT NULL, raw TEXT, rationale TEXT, params TEXT, created TEXT NOT NULL)""")
    db.execute("CREATE INDEX stability_run ON stability_answers(run_id, check_name, decision_id)")


@migrations()
def m008_settings(db: Database) -> None:
    """Facts about the database itself (e.g. `demo_seeded`: the demo runs were scored into it once)."""
    db.execute("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated TEXT NOT NULL)")
