"""Generate a CHIMERA-format benchmark of N abstracts: gold CSV, perturbed predictions, and a replay judge log.

Gold rows are resampled (with replacement, seeded) from the real `data/chimera/eval.csv`; copy k of paper
`orig` gets the id `f"{orig}-{k}"` and keeps text, document_class, entities, relations and readable_relations.
Predictions are perturbed copies of the gold relation, like `data/chimera/pred_mixed.jsonl`:

- abstract with a gold recombination: exact gold copy, dropped span, span replaced by a random phrase of the
  abstract, swapped relation type (combination <-> inspiration), missing recombination (`{}`), duplicated span
  (verbatim or upper-cased);
- abstract without one: true negative (`{}`) or a false alarm made of random phrases of the abstract.

The judge log answers every distinct ordered same-type (predicted span, gold span) pair of every abstract, in
both orders: `yes` in both orders when the spans are equal case- and whitespace-insensitively; otherwise
(seeded) yes in both orders for 15% of pairs, yes in one order only for 10% (which must not count as a match),
no in both orders for the rest; about 20% of the answers to unequal pairs are yes. Same N and seed -> same
files, byte for byte.

    python bench/generate.py N OUTDIR [--seed S]   (the command line; the generators live here, in devtools/)

`--family retrieval` writes N ranked queries instead (`devtools/generate_retrieval.py`: the demo's rank distribution).
"""

from __future__ import annotations

import csv
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from devtools.generate_retrieval import generate_retrieval  # noqa: E402, F401 (re-exported for bench/generate.py)

SOURCE = ROOT / "data" / "chimera" / "eval.csv"
ENTITY_TYPES = ("comb-element", "inspiration-src", "inspiration-target")
RENAME = {"analogy": "inspiration", "blend": "combination", "analogy-src": "inspiration-src",
          "analogy-target": "inspiration-target", "blend-element": "comb-element"}

# (perturbation, weight) for abstracts with / without a gold recombination; close to pred_mixed.jsonl's mix
WITH_GOLD = (("exact", 25), ("dropped span", 15), ("replaced span", 15), ("swapped type", 15),
             ("missing recombination", 15), ("duplicated span", 15))
WITHOUT_GOLD = (("true negative", 85), ("false alarm", 15))
P_BOTH_YES, P_ONE_ORDER = 0.15, 0.10


def _norm_relations(rr: dict) -> dict:
    """readable_relations with the old names (analogy, analogy-src, ...) renamed."""
    out: dict = {}
    for rtype, rels in rr.items():
        rels = [rels] if isinstance(rels, dict) else rels
        out.setdefault(RENAME.get(rtype, rtype), []).extend(
            {RENAME.get(et, et): list(spans) for et, spans in rel.items()} for rel in rels)
    return out


def _phrase(rng: random.Random, text: str) -> str:
    words = text.split()
    if not words:
        return "an unrelated phrase"
    n = rng.randint(2, 6)
    start = rng.randrange(max(1, len(words) - n + 1))
    return " ".join(words[start:start + n])


def _spans(rel: dict) -> list[tuple[str, int]]:
    """(entity type, index) of every span of one relation."""
    return [(et, i) for et, spans in rel.items() for i in range(len(spans))]


def perturb(rng: random.Random, gold: dict, text: str) -> tuple[str, dict]:
    """(perturbation name, predicted relations) for one abstract."""
    if not gold:
        kind = rng.choices([k for k, _ in WITHOUT_GOLD], [w for _, w in WITHOUT_GOLD])[0]
        if kind == "true negative":
            return kind, {}
        if rng.random() < 0.7:
            return kind, {"combination": [{"comb-element": [_phrase(rng, text) for _ in range(rng.randint(2, 3))]}]}
        return kind, {"inspiration": [{"inspiration-src": [_phrase(rng, text)],
                                       "inspiration-target": [_phrase(rng, text)]}]}
    kind = rng.choices([k for k, _ in WITH_GOLD], [w for _, w in WITH_GOLD])[0]
    pred = json.loads(json.dumps(gold))  # deep copy
    rtype = next(iter(pred))
    rel = pred[rtype][0]
    if kind == "dropped span":
        spans = _spans(rel)
        if len(spans) < 2:
            kind = "exact"
        else:
            et, i = rng.choice(spans)
            del rel[et][i]
            if not rel[et]:
                del rel[et]
    elif kind == "replaced span":
        et, i = rng.choice(_spans(rel))
        rel[et][i] = _phrase(rng, text)
    elif kind == "duplicated span":
        et, i = rng.choice(_spans(rel))
        span = rel[et][i]
        rel[et].append(span.upper() if rng.random() < 0.5 else span)
    elif kind == "swapped type":
        spans = [s for ss in rel.values() for s in ss]
        if rtype == "combination":
            target = spans[1:] or [_phrase(rng, text)]
            pred = {"inspiration": [{"inspiration-src": spans[:1], "inspiration-target": target}]}
        else:
            pred = {"combination": [{"comb-element": spans}]}
    elif kind == "missing recombination":
        pred = {}
    return kind, pred


def _flat(rels: dict) -> dict[str, list[str]]:
    """Distinct spans per entity type, in order."""
    out: dict[str, dict[str, None]] = {t: {} for t in ENTITY_TYPES}
    for rel_list in rels.values():
        for rel in rel_list:
            for et, spans in rel.items():
                for s in spans:
                    out[et][s] = None
    return {t: list(v) for t, v in out.items()}


def ordered_pairs(pid: str, pred: dict, gold: dict) -> list[tuple[str, str, str, str]]:
    """Every distinct ordered same-type (doc, type, span1, span2) key the scorer may ask about."""
    p, g = _flat(pred), _flat(gold)
    keys: dict[tuple[str, str, str, str], None] = {}
    for t in ENTITY_TYPES:
        for pv in p[t]:
            for gv in g[t]:
                keys[(pid, t, pv, gv)] = None
                keys[(pid, t, gv, pv)] = None
    return list(keys)


def judge_answers(rng: random.Random, pid: str, pred: dict, gold: dict) -> dict[tuple[str, str, str, str], str]:
    """Seeded answers for every ordered pair of one abstract (see the module docstring)."""
    p, g = _flat(pred), _flat(gold)
    out: dict[tuple[str, str, str, str], str] = {}
    for t in ENTITY_TYPES:
        for pv in p[t]:
            for gv in g[t]:
                fwd, bwd = (pid, t, pv, gv), (pid, t, gv, pv)
                if fwd in out:
                    continue  # the same unordered pair came up the other way round
                if pv.casefold().split() == gv.casefold().split():
                    a = b = "yes"
                else:
                    r = rng.random()
                    if r < P_BOTH_YES:
                        a = b = "yes"
                    elif r < P_BOTH_YES + P_ONE_ORDER:
                        a, b = ("yes", "no") if rng.random() < 0.5 else ("no", "yes")
                    else:
                        a = b = "no"
                out[fwd] = a
                out[bwd] = b if fwd != bwd else a
    return out


def generate(n: int, outdir: str | Path, seed: int = 0) -> dict:
    """Write gold.csv, pred.jsonl and judge.jsonl for N abstracts into OUTDIR; return summary figures."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    csv.field_size_limit(64 * 1024 * 1024)
    with SOURCE.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    rng = random.Random(seed)
    kinds: Counter[str] = Counter()
    n_answers = n_yes = 0
    tmp = {k: out / f".{k}.tmp" for k in ("gold", "pred", "log")}
    with (tmp["gold"].open("w", encoding="utf-8", newline="") as gf,
          tmp["pred"].open("w", encoding="utf-8") as pf,
          tmp["log"].open("w", encoding="utf-8") as lf):
        writer = csv.DictWriter(gf, fieldnames=fields)
        writer.writeheader()
        for k in range(n):
            src = rows[rng.randrange(len(rows))]
            pid = f"{src['paper_id']}-{k}"
            writer.writerow(src | {"paper_id": pid})
            gold = _norm_relations(json.loads(src["readable_relations"] or "{}"))
            kind, pred = perturb(rng, gold, src["text"])
            kinds[kind] += 1
            pf.write(json.dumps({"paper_id": pid, "relations": pred}, ensure_ascii=False) + "\n")
            for (d, t, s1, s2), ans in judge_answers(rng, pid, pred, gold).items():
                lf.write(json.dumps({"paper_id": d, "entity_type": t, "span1": s1, "span2": s2, "answer": ans},
                                    ensure_ascii=False) + "\n")
                n_answers += 1
                n_yes += ans == "yes"
    for k, name in (("gold", "gold.csv"), ("pred", "pred.jsonl"), ("log", "judge.jsonl")):
        tmp[k].replace(out / name)
    return {"abstracts": n, "judge_answers": n_answers, "yes_answers": n_yes, "kinds": dict(kinds),
            "dir": str(out)}


def generate_system(gold_csv: str | Path, outdir: str | Path, seed: int) -> dict:
    """Another system on an existing gold: pred.jsonl and judge.jsonl for every abstract of `gold_csv`, perturbed
    and judged as `generate` does with its own seed (a board's systems share the gold, and the questions where
    their predictions agree, e.g. exact copies)."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    csv.field_size_limit(64 * 1024 * 1024)
    rng = random.Random(seed)
    kinds: Counter[str] = Counter()
    tmp = {k: out / f".{k}.tmp" for k in ("pred", "log")}
    with (Path(gold_csv).open(encoding="utf-8", newline="") as gf, tmp["pred"].open("w", encoding="utf-8") as pf,
          tmp["log"].open("w", encoding="utf-8") as lf):
        for src in csv.DictReader(gf):
            pid = src["paper_id"]
            gold = _norm_relations(json.loads(src["readable_relations"] or "{}"))
            kind, pred = perturb(rng, gold, src["text"])
            kinds[kind] += 1
            pf.write(json.dumps({"paper_id": pid, "relations": pred}, ensure_ascii=False) + "\n")
            for (d, t, s1, s2), ans in judge_answers(rng, pid, pred, gold).items():
                lf.write(json.dumps({"paper_id": d, "entity_type": t, "span1": s1, "span2": s2, "answer": ans},
                                    ensure_ascii=False) + "\n")
    tmp["pred"].replace(out / "pred.jsonl")
    tmp["log"].replace(out / "judge.jsonl")
    return {"kinds": dict(kinds), "dir": str(out)}
