"""Schema changes, one registered function each; `audit.store.database.open_db` applies the pending ones.

Never edit a migration that has been applied somewhere; add a new one. A migration works on the schema and data
it was written for: what it needs is written (frozen) here, never imported from the application or the families
(their code moves on; a migration must not). One that changes decisions or reviews marks the audited state stale
(`mark_audit_stale`) and the application rebuilds it with its current code (`audit/stale.py`).
"""

import json
import struct

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("rejudge")
SCHEMA_VERSION = 24  # m024 is the newest (no m009, m018 or m019: numbers reserved by branches that needed none)


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


M004_UNORDERED_KINDS = {"chimera": ("entity_pair",), "ideation": ("comparison",)}
"""Per task, the decision kinds whose (left, right) was an unordered pair when m004 was written (the families'
`symmetric` label schemes then). Frozen here, like everything a migration needs: a migration does what it did on
the schema and data it was written for, whatever the families say today."""


def m004_reviewer_labels(reviews: list[tuple[str, str | None, str]]) -> dict[str, str]:
    """Each reviewer's latest label from (reviewer, label, role) rows, oldest first: an undo (label NULL) removes
    it, an adjudication is no reviewer's label (the effective-label rule as m004 was written).

    >>> m004_reviewer_labels([("ana", "match", "reviewer"), ("bo", "no-match", "reviewer"), ("ana", "no-match",
    ...                       "reviewer"), ("bo", None, "reviewer"), ("cy", "match", "adjudicator")])
    {'ana': 'no-match'}
    """
    labels: dict[str, str] = {}
    for reviewer, label, role in reviews:
        if role == "adjudicator":
            continue
        if label is None:
            labels.pop(reviewer, None)
        else:
            labels[reviewer] = label
    return labels


def mark_audit_stale(db: Database, run_id: int) -> None:
    """Delete the run's derived audited state: the application rebuilds it with its current code (`audit.stale`).

    Counting a document is family code that changes after a migration is written, so a migration that changes
    decisions or reviews never re-counts; a run without an `audit_state` row is stale."""
    for table in ("audit_state", "effective", "doc_audit"):
        db.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])


@migrations()
def m004_one_decision_per_question(db: Database) -> None:
    """Merge twin decisions: for decision kinds whose (left, right) is an unordered pair (`M004_UNORDERED_KINDS`),
    (x, y) and (y, x) of one document and type are one judge question. The lowest id is kept; reviews of a dropped
    twin move to it (so the reviewer's later review wins) and every reviewer whose twins carried different labels
    is reported in the run's summary (`migration_notes`). The judge labels of twins are equal by construction (the
    same two prompts), so the original counts stand; the audited state of a merged run is marked stale."""
    for run_id, task_name, summary in db.execute("SELECT id, task, summary FROM runs").fetchall():
        kinds = M004_UNORDERED_KINDS.get(task_name, ())
        if not kinds:
            continue
        groups: dict[tuple, list[int]] = {}
        for dec_id, doc, kind, typ, left, right in db.execute(
                f"SELECT id, doc_id, kind, type, left, right FROM decisions WHERE run_id = ? AND kind IN "
                f"({','.join('?' * len(kinds))}) ORDER BY id", [run_id, *kinds]).fetchall():
            groups.setdefault((doc, kind, typ, frozenset((left, right))), []).append(dec_id)
        twins = [ids for ids in groups.values() if len(ids) > 1]
        if not twins:
            continue
        mark_audit_stale(db, run_id)
        notes, dropped = [], []
        for ids in twins:
            keep, rest = ids[0], ids[1:]
            labels_per_twin = [m004_reviewer_labels(db.execute(
                "SELECT reviewer, label, role FROM reviews WHERE decision_id = ? ORDER BY created, id", [i]).fetchall())
                for i in ids]
            for who in sorted({w for labels in labels_per_twin for w in labels}):
                seen = {labels[who] for labels in labels_per_twin if who in labels}
                if len(seen) > 1:
                    notes.append(f"decisions {', '.join(f'#{i}' for i in ids)} were one question; {who} labelled "
                                 f"them {' and '.join(sorted(seen))}: their later review now stands on #{keep}")
            marks = ",".join("?" * len(rest))
            db.execute(f"UPDATE reviews SET decision_id = ? WHERE decision_id IN ({marks})", [keep, *rest])
            db.execute(f"DELETE FROM decisions WHERE id IN ({marks})", rest)
            dropped += rest
        data = json.loads(summary)
        data["migration_notes"] = data.get("migration_notes", []) + [
            f"m004: merged {len(dropped)} twin decision(s) into the decision they duplicated"] + notes
        db.execute("UPDATE runs SET summary = ?, n_decisions = (SELECT COUNT(*) FROM decisions WHERE run_id = ?) "
                   "WHERE id = ?", [json.dumps(data, ensure_ascii=False), run_id, run_id])


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


@migrations()
def m010_verified_identity(db: Database) -> None:
    """Who made each review, erratum and stability answer: in team mode the sign-in provider's subject and e-mail
    (`auth_mode` 'oidc'); rows written before (or in local mode, or by the CLI) keep `auth_mode` 'local': their
    reviewer name is an unverified label. Blind assignments: the owner makes a run (`reviewer` '*') or one reviewer
    on a run blind (upserted, one row per run and reviewer)."""
    for table in ("reviews", "errata", "stability_answers"):
        db.execute(f"ALTER TABLE {table} ADD COLUMN auth_subject TEXT")
        db.execute(f"ALTER TABLE {table} ADD COLUMN auth_email TEXT")
        db.execute(f"ALTER TABLE {table} ADD COLUMN auth_mode TEXT NOT NULL DEFAULT 'local'")
    db.execute("""CREATE TABLE blind_assignments (
        run_id INTEGER NOT NULL REFERENCES runs(id), reviewer TEXT NOT NULL, blind INTEGER NOT NULL,
        set_by TEXT NOT NULL, updated TEXT NOT NULL, PRIMARY KEY (run_id, reviewer))""")


@migrations()
def m011_retrieval_expected_ties(db: Database) -> None:
    """Retrieval's `mean` tie policy became the expected figure over random tie orders (it was the figure of the
    mean rank): the stored metrics of retrieval runs are stale. `runs.metrics_stale` marks a run whose original
    metrics the application re-aggregates from its stored document counts with its current code (`audit/stale.py`);
    the audited state is rebuilt as after any stale mark."""
    db.execute("ALTER TABLE runs ADD COLUMN metrics_stale INTEGER NOT NULL DEFAULT 0")
    for (run_id,) in list(db.execute("SELECT id FROM runs WHERE task = 'retrieval'")):
        db.execute("UPDATE runs SET metrics_stale = 1 WHERE id = ?", [run_id])
        mark_audit_stale(db, run_id)


@migrations()
def m012_review_assignments(db: Database) -> None:
    """Assigned review: per run, the owner's settings (reviewers, how many reviewers a double-coded document needs,
    the double-coded subset, the sample size, the seed) and the distribution they gave, one row per document and
    reviewer (`review_shares`), fixed when set so that a plan made later does not move anyone's share."""
    db.execute("""CREATE TABLE review_assignments (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id), reviewers TEXT NOT NULL, min_reviewers INTEGER NOT NULL,
        double_code TEXT NOT NULL, documents INTEGER, seed INTEGER NOT NULL, universe TEXT NOT NULL,
        set_by TEXT NOT NULL, updated TEXT NOT NULL)""")
    db.execute("""CREATE TABLE review_shares (
        run_id INTEGER NOT NULL REFERENCES runs(id), doc_id TEXT NOT NULL, reviewer TEXT NOT NULL,
        double_coded INTEGER NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (run_id, doc_id, reviewer))""")
    db.execute("CREATE INDEX review_shares_reviewer ON review_shares(run_id, reviewer)")


@migrations()
def m013_review_client_id(db: Database) -> None:
    """Reviews sent from the browser's review card carry the card's own id for each label (`client_id`): a label
    re-sent after a reconnect is stored once (unique where set; rows written otherwise leave it empty)."""
    db.execute("ALTER TABLE reviews ADD COLUMN client_id TEXT")
    db.execute("CREATE UNIQUE INDEX reviews_client_id ON reviews(client_id) WHERE client_id IS NOT NULL")


# the reviews each run sees: every review of a decision with the same question key (same family, same gold content
# of the document, same judge question; `scoring.families.base.TaskFamily.question_key`), whichever run it was made
# in; a decision without a key (not yet keyed) sees its own reviews only. A review is a sample draw only in the run
# whose queue served it.
_REVIEW_COLS = "id, uid, reviewer, label, role, note, blind, created, auth_subject, auth_email, auth_mode, client_id"
RUN_REVIEWS_VIEW = f"""CREATE VIEW run_reviews AS
    SELECT {", ".join("v." + c for c in _REVIEW_COLS.split(", "))}, d2.run_id AS run_id, d2.id AS decision_id,
           CASE WHEN v.run_id = d2.run_id THEN v.sampled ELSE 0 END AS sampled, v.run_id AS made_in_run,
           v.decision_id AS made_on_decision
    FROM reviews v CROSS JOIN decisions d1 CROSS JOIN decisions d2
    WHERE d1.id = v.decision_id AND d1.qkey IS NOT NULL AND d2.qkey = d1.qkey
    UNION ALL
    SELECT {", ".join("v." + c for c in _REVIEW_COLS.split(", "))}, v.run_id, v.decision_id, v.sampled, v.run_id,
           v.decision_id
    FROM reviews v CROSS JOIN decisions d1
    WHERE d1.id = v.decision_id AND d1.qkey IS NULL"""


@migrations()
def m014_shared_questions(db: Database) -> None:
    """A review settles a question, not a run (issue 36): decisions get their question key (`qkey`: family, the
    document's gold key and the family's question key, hashed), and the `run_reviews` view gives every run the
    reviews of its questions from every run. Keys are family code, so this migration only marks the runs stored
    before it (`runs.qkeys_missing`); the application computes their keys and rebuilds the audited state of every
    run that then shares a question (`audit/stale.py`). Until then a run sees its own reviews only, as before."""
    db.execute("ALTER TABLE decisions ADD COLUMN qkey TEXT")
    db.execute("CREATE INDEX decisions_qkey ON decisions(qkey, run_id) WHERE qkey IS NOT NULL")
    db.execute("ALTER TABLE runs ADD COLUMN qkeys_missing INTEGER NOT NULL DEFAULT 0")
    db.execute("UPDATE runs SET qkeys_missing = 1")
    db.execute("DROP VIEW IF EXISTS run_reviews")
    db.execute(RUN_REVIEWS_VIEW)


@migrations()
def m015_boards(db: Database) -> None:
    """Boards (issue 36 §2): several runs of one family on the same gold compared side by side. `runs` is the JSON
    list of the runs' names in the board's order; `systems` is null, or for a family whose systems live inside one
    run (ideation) the JSON list of those systems. Nothing else changes: no review, run or number is touched."""
    db.execute("""CREATE TABLE boards (
        name TEXT PRIMARY KEY, family TEXT NOT NULL, runs TEXT NOT NULL, systems TEXT, created TEXT NOT NULL)""")


@migrations()
def m016_board_plans(db: Database) -> None:
    """A board's one sampling plan (issue 36 §3; `audit/board/joint.py`): the runs it covers, its seed and the plan
    (documents by gold content, strata, the seeded order), keyed by board name; and the documents its queue has
    served (`board_draws`): a served document, once reviewed whole, is a sample draw of the board, whichever run its
    reviews were made in. No foreign key to the boards table: a board's plan stays with its name."""
    db.execute("""CREATE TABLE board_plans (
        board TEXT PRIMARY KEY, runs TEXT NOT NULL, seed INTEGER NOT NULL, created TEXT NOT NULL,
        plan TEXT NOT NULL)""")
    db.execute("""CREATE TABLE board_draws (
        board TEXT NOT NULL, block TEXT NOT NULL, served TEXT NOT NULL, PRIMARY KEY (board, block))""")


@migrations()
def m017_judge_improvements(db: Database) -> None:
    """Each `improve-judge` result on a run (issue #37): its strategy, seed, the document ids of each fold and the
    whole result JSON, so the page and the CLI show the same folds and the last result reads back without
    refitting (an LLM strategy without its server)."""
    db.execute("""CREATE TABLE judge_improvements (
        id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), strategy TEXT NOT NULL,
        seed INTEGER NOT NULL, folds TEXT NOT NULL, result TEXT NOT NULL, created TEXT NOT NULL)""")
    db.execute("CREATE INDEX judge_improvements_run ON judge_improvements(run_id, strategy, id)")


M020_REKEYED_TASKS = ("retrieval",)
"""Tasks whose gold key changed after their runs were keyed (m014): retrieval had none, so every query shared one
and a question was keyed by its (relation, candidate, positive) alone, in every query with that positive. Frozen."""


@migrations()
def m020_retrieval_question_keys(db: Database) -> None:
    """Re-key retrieval's questions (issue 36 §1): its gold key is now the query's gold side, so the keys stored
    before (colliding across queries with the same positive) are dropped and the runs marked `qkeys_missing`; the
    application computes the new keys and rebuilds the audited state of every run of the family
    (`audit/stale.py`). Until then a retrieval run sees its own reviews only (a NULL key), so its stored audited
    state, built with the other queries' reviews, is marked stale. No review or decision is deleted. Written for
    the schema of m014 (its columns only); it needs nothing newer."""
    marks = ",".join("?" * len(M020_REKEYED_TASKS))
    for (run_id,) in db.execute(f"SELECT id FROM runs WHERE task IN ({marks}) ORDER BY id",
                                M020_REKEYED_TASKS).fetchall():
        db.execute("UPDATE decisions SET qkey = NULL WHERE run_id = ?", [run_id])
        db.execute("UPDATE runs SET qkeys_missing = 1 WHERE id = ?", [run_id])
        mark_audit_stale(db, run_id)


@migrations()
def m021_fold_labels(db: Database) -> None:
    """The labels each fold judge of an LLM-improved judge gave a run's decisions (issue #37 §2): a run scored with
    a few-shot or rules judge improved on reviews its estimate counts is cross-fitted from these, offline (the
    fold judges' answers themselves sit in `judge_cache` under their prompts' hashes). A new table: it applies in
    any order with m020."""
    db.execute("""CREATE TABLE fold_labels (
        run_id INTEGER NOT NULL REFERENCES runs(id), fold INTEGER NOT NULL,
        decision_id INTEGER NOT NULL REFERENCES decisions(id), label TEXT NOT NULL, answers TEXT NOT NULL,
        PRIMARY KEY (run_id, fold, decision_id))""")


@migrations()
def m022_stored_review_counts(db: Database) -> None:
    """The audited state keeps its run's review counts (issue #38: counting them on every read walked all the
    reviews the run sees, 8.9 s at a million): a new column of `audit_state`, the JSON of the counts, written with
    the state. The states stored before have none (NULL): the application counts them afresh, as for a stale state
    (`audit/stale.py`); until then reads recount in memory. No review, decision or number is changed."""
    db.execute("ALTER TABLE audit_state ADD COLUMN review_counts TEXT")


@migrations()
def m023_sampled_reviews_index(db: Database) -> None:
    """Index the sample draws (issue #38): a sampled audit's state reads which decisions of a run were served by its
    queue on every page render, and the `run_reviews` view walked all the run's reviews to find them (0.57 s at a
    million). A partial index of the few sampled rows; no row is changed."""
    db.execute("CREATE INDEX reviews_sampled ON reviews(run_id, decision_id) WHERE sampled = 1")


@migrations()
def m024_document_counts(db: Database) -> None:
    """A run's original counts once per distinct value, with each document's position among them (issue #38:
    reading `documents.counts` walks every payload's pages, 0.75 s of every fresh `queue --next` at 100,000
    abstracts; `audit/store/counts_index.py` says the format). Filled here for the runs stored before, from their
    documents; no row elsewhere is changed. Frozen: the format is spelled out here, not imported."""
    db.execute("""CREATE TABLE document_counts (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id), doc_ids TEXT NOT NULL, counts TEXT NOT NULL,
        doc_counts BLOB NOT NULL)""")
    for (run_id,) in db.execute("SELECT id FROM runs ORDER BY id").fetchall():
        doc_ids: list[str] = []
        position: dict[str, int] = {}
        order: list[int] = []
        for doc_id, counts in db.execute("SELECT doc_id, counts FROM documents WHERE run_id = ? ORDER BY idx",
                                         [run_id]):
            doc_ids.append(doc_id)
            order.append(position.setdefault(counts, len(position)))
        db.execute("INSERT INTO document_counts (run_id, doc_ids, counts, doc_counts) VALUES (?, ?, ?, ?)",
                   [run_id, json.dumps(doc_ids, ensure_ascii=False, separators=(",", ":")),
                    "[" + ",".join(position) + "]", struct.pack(f"<{len(order)}I", *order)])
