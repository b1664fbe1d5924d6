"""The paper's CHIMERA scorer done naively in memory, for comparison with Rejudge's decide/aggregate split.

A re-implementation of the loops of CHIMERA-KB `src/eval.py` (noy-sternlicht/CHIMERA-KB; Sternlicht & Hope,
arXiv 2505.20779): entities with fresh uuids and one-item coreference lists, `compute_similarity_LLM` asking the
judge in BOTH span orders for every coreference pair (no short-circuit, no cache), first-match greedy entity
choice, the flat entity-agreement pass (`compute_entity_agreement`) and the relation pass
(`eval_rel_extraction`, which matches entities again inside the aligned relations), classification by empty vs
non-empty relation dict, and `compute_eval_criteria`. The only change: each judge call is a dict lookup into a
replay log instead of a gpt-4o-mini request, and the per-document log strings the reference builds for its
logger are not built. Nothing is stored.

Reports `classification`, `entities` (from the flat entity-agreement pass) and `relations`, as the paper does.

    python bench/naive_chimera.py GOLD.csv PRED.jsonl JUDGE.jsonl     # prints the metrics JSON and the counts
"""

from __future__ import annotations

import csv
import json
import sys
import uuid

RELATION_TYPES = ["combination", "inspiration"]
ENTITY_TYPES = ["comb-element", "inspiration-src", "inspiration-target"]
RENAME = {"analogy": "inspiration", "blend": "combination", "analogy-src": "inspiration-src",
          "analogy-target": "inspiration-target", "blend-element": "comb-element"}


class ReplayLookup:
    """The judge: `prompt_span_comparison_model` answered from a judge log, counting every call.

    The reference prompt sees the abstract text, not the paper id; a replay log is keyed by paper id, so the
    driver sets `doc` before scoring each abstract.
    """

    def __init__(self, answers: dict[tuple[str, str, str, str], str]) -> None:
        self.answers = answers
        self.doc = ""
        self.calls = 0

    def __call__(self, span1: str, span2: str, text: str, span_type: str) -> str:  # noqa: ARG002 (text: as the paper)
        self.calls += 1
        answer = self.answers.get((self.doc, span_type, span1, span2), "")
        answer = answer.strip().lower()
        return answer if answer in ("yes", "no") else ""


JUDGE = ReplayLookup({})


def prompt_span_comparison_model(span1: str, span2: str, text: str, span_type: str) -> str:
    return JUDGE(span1, span2, text, span_type)


class RelationEntity:
    def __init__(self, tagged_token_id: str, entity_type: str, value: str, coreferences: list[str]) -> None:
        if not tagged_token_id:
            tagged_token_id = str(uuid.uuid4())
        self.id = tagged_token_id
        self.type = entity_type
        if value not in coreferences:
            coreferences.append(value)
        self.value = value
        self.coreferences = coreferences

    def compute_similarity_llm(self, other: RelationEntity, paper_text: str) -> tuple[str | None, int]:
        max_score = 0
        max_match = None
        if self.type != other.type:
            return max_match, max_score
        for coref in self.coreferences:
            for other_coref in other.coreferences:
                match1 = prompt_span_comparison_model(coref, other_coref, paper_text, self.type)
                match2 = prompt_span_comparison_model(other_coref, coref, paper_text, self.type)
                if match1 == "yes" and match2 == "yes":
                    max_match = other_coref
                    max_score = 1
                    break
        return max_match, max_score

    def get_most_similar_entity_llm(self, entities: list[RelationEntity], paper_text: str):
        max_score = 0
        most_similar_span = None
        max_match = None
        for entity in entities:
            span, score = self.compute_similarity_llm(entity, paper_text)
            if score > max_score:
                max_score = score
                max_match = entity
                most_similar_span = span
        return max_match, most_similar_span, max_score


class Relation:
    def __init__(self, relation_type: str, entities: list[RelationEntity]) -> None:
        self.id = str(uuid.uuid4())
        self.relation_type = relation_type
        self.entities = entities
        self.nr_entities = len(entities)
        self.entities_by_type: dict[str, list[RelationEntity]] = {}
        for entity in entities:
            self.entities_by_type.setdefault(entity.type, []).append(entity)

    @classmethod
    def from_entity_dictionaries(cls, relation_type: str, rel_entities_by_type: dict[str, list[str]],
                                 entity_coreferences: dict[str, list[str]]) -> Relation:
        rel_entities = []
        for entity_type, entity_values in rel_entities_by_type.items():
            for entity_val in entity_values:
                rel_entities.append(RelationEntity(str(uuid.uuid4()), entity_type, entity_val,
                                                   entity_coreferences.get(entity_val, [])))
        return cls(relation_type, rel_entities)

    def compute_similarity(self, other: Relation, paper_text: str, similarity_threshold: float):
        similarity_score = 0.0
        entity_matches: dict[str, dict[str, str]] = {}
        for entity_type, entities in self.entities_by_type.items():
            entity_matches.setdefault(entity_type, {})
            for entity in entities:
                entity_matches[entity_type][entity.value] = ""
        unique_matches = set()
        if self.relation_type != other.relation_type:
            return similarity_score, entity_matches
        for entity in self.entities:
            match, span, score = entity.get_most_similar_entity_llm(other.entities, paper_text)
            if score >= similarity_threshold:
                entity_matches[entity.type][entity.value] = span
                unique_matches.add(match.id)
        similarity_score = len(unique_matches) / len(self.entities)
        return similarity_score, entity_matches

    def get_most_similar_relation(self, relations: list[Relation], paper_text: str, entity_similarity_score: float):
        max_score = 0
        max_rel_id = None
        max_entity_matches = None
        for relation in relations:
            score, entity_matches = self.compute_similarity(relation, paper_text, entity_similarity_score)
            if score > max_score:
                max_score = score
                max_rel_id = relation.id
                max_entity_matches = entity_matches
        return max_rel_id, max_entity_matches


def get_default_metrics_dict(types: list[str], default_init: int) -> dict:
    return {t: {"tp": default_init, "fp": default_init, "fn": default_init, "total_pred_ent": default_init,
                "pred_om": default_init, "total_gold_ent": default_init, "gold_om": default_init} for t in types}


def get_doc_entity_agreement_metrics(prediction, gold, text, entity_types):
    pred_match_by_type: dict = {}
    for entity in prediction:
        pred_match_by_type.setdefault(entity.type, {})[entity.id] = {"entity": entity, "match": None}
    gold_match_by_type: dict = {}
    for entity in gold:
        gold_match_by_type.setdefault(entity.type, {})[entity.id] = {"entity": entity, "match": None}

    for ent_type, pred_entities in pred_match_by_type.items():
        if ent_type not in gold_match_by_type:
            continue
        for pred_id, pred_match_info in pred_entities.items():
            pred_entity = pred_match_info["entity"]
            gold_entities_of_type = [g["entity"] for g in gold_match_by_type[ent_type].values()]
            max_match, _max_span, _max_score = pred_entity.get_most_similar_entity_llm(gold_entities_of_type, text)
            if max_match:
                pred_match_by_type[ent_type][pred_id]["match"] = max_match

    for ent_type, gold_entities in gold_match_by_type.items():
        if ent_type not in pred_match_by_type:
            continue
        for gold_id, gold_match_info in gold_entities.items():
            gold_entity = gold_match_info["entity"]
            pred_entities_of_type = [p["entity"] for p in pred_match_by_type[ent_type].values()]
            max_match, _max_span, _max_score = gold_entity.get_most_similar_entity_llm(pred_entities_of_type, text)
            if max_match:
                gold_match_by_type[ent_type][gold_id]["match"] = max_match

    ent_metrics = get_default_metrics_dict(entity_types, 0)
    for entity_type, pred_entities in pred_match_by_type.items():
        all_matches = [m["match"].id for m in pred_entities.values() if m["match"]]
        unique_matches = set(all_matches)
        ent_metrics[entity_type]["tp"] += len(unique_matches)
        ent_metrics[entity_type]["fp"] += len([m for m in pred_entities.values() if not m["match"]])
        ent_metrics[entity_type]["pred_om"] += len(all_matches) - len(unique_matches)
        ent_metrics[entity_type]["total_pred_ent"] += len(pred_entities)
    for entity_type, gold_entities in gold_match_by_type.items():
        all_matches = [m["match"].id for m in gold_entities.values() if m["match"]]
        unique_matches = set(all_matches)
        ent_metrics[entity_type]["fn"] += len([m for m in gold_entities.values() if not m["match"]])
        ent_metrics[entity_type]["gold_om"] += len(all_matches) - len(unique_matches)
        ent_metrics[entity_type]["total_gold_ent"] += len(gold_entities)
    return ent_metrics


def compute_eval_criteria(metrics_by_type: dict, undefined_val: float = 0) -> dict:
    metrics: dict = {}
    for t in metrics_by_type:
        tp, fp, fn = metrics_by_type[t]["tp"], metrics_by_type[t]["fp"], metrics_by_type[t]["fn"]
        precision = tp / (tp + fp) if tp + fp > 0 else undefined_val
        recall = tp / (tp + fn) if tp + fn > 0 else undefined_val
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else undefined_val
        total_gold_ent = metrics_by_type[t]["total_gold_ent"]
        gold_om = metrics_by_type[t]["gold_om"]
        gold_over_matching = gold_om / total_gold_ent if total_gold_ent > 0 else undefined_val
        total_pred_ent = metrics_by_type[t]["total_pred_ent"]
        pred_om = metrics_by_type[t]["pred_om"]
        pred_over_matching = pred_om / total_pred_ent if total_pred_ent > 0 else undefined_val
        fp_ratio = fp / (tp + fp) if tp + fp > 0 else undefined_val
        metrics[t] = {"precision": precision, "recall": recall, "f1": f1, "gold_over_matching": gold_over_matching,
                      "pred_over_matching": pred_over_matching, "fp_ratio": fp_ratio, "fp": fp, "tp": tp, "fn": fn}
    avg_metrics = {"precision": 0, "recall": 0, "f1": 0, "gold_over_matching": 0, "pred_over_matching": 0,
                   "fp_ratio": 0}
    for t in metrics:
        for key in avg_metrics:
            avg_metrics[key] += metrics[t][key]
    for key in avg_metrics:
        avg_metrics[key] /= len(metrics)
    metrics["avg"] = avg_metrics
    return metrics


def compute_entity_agreement(pred_entities, gold_entities, texts, paper_ids, entity_types, undefined_val=0):
    entity_metrics = get_default_metrics_dict(entity_types, 0)
    for pred_entities_doc, gold_entities_doc, text, pid in zip(pred_entities, gold_entities, texts, paper_ids,
                                                               strict=True):
        JUDGE.doc = pid
        doc_ent_metrics = get_doc_entity_agreement_metrics(pred_entities_doc, gold_entities_doc, text, entity_types)
        for entity_type, metrics in doc_ent_metrics.items():
            for metric_name, metric_value in metrics.items():
                entity_metrics[entity_type][metric_name] += metric_value
    return compute_eval_criteria(entity_metrics, undefined_val)


def get_relations_match_table(relations_by_type) -> dict:
    table: dict = {}
    for rel_type, relations in relations_by_type.items():
        table.setdefault(rel_type, {})
        for relation in relations:
            matches: dict = {}
            for entity_type, entities in relation.entities_by_type.items():
                matches.setdefault(entity_type, {})
                for entity in entities:
                    matches[entity_type][entity.value] = ""
            table[rel_type][relation.id] = {"relation": relation, "matches": matches}
    return table


def _count_side(match_table, rel_metrics, ent_metrics, ent_types, pred_side: bool) -> None:
    for rel_type, relations in match_table.items():
        for rel_id in relations:
            unique_matches = set()
            unique_matches_by_type = {t: set() for t in ent_types}
            nr_matches = 0
            nr_matches_by_type = dict.fromkeys(ent_types, 0)
            nr_no_matches = 0
            nr_no_matches_by_type = dict.fromkeys(ent_types, 0)
            nr_entities = 0
            nr_entities_by_type = dict.fromkeys(ent_types, 0)
            for ent_type, entity_matches in match_table[rel_type][rel_id]["matches"].items():
                for _entity, match in entity_matches.items():
                    if match:
                        unique_matches_by_type[ent_type].add(match)
                        unique_matches.add(match)
                        nr_matches_by_type[ent_type] += 1
                        nr_matches += 1
                    else:
                        nr_no_matches_by_type[ent_type] += 1
                        nr_no_matches += 1
                    nr_entities_by_type[ent_type] += 1
                    nr_entities += 1
            nr_unique = len(unique_matches)
            nr_unique_by_type = {t: len(unique_matches_by_type[t]) for t in ent_types}
            if pred_side:
                rel_metrics[rel_type]["tp"] += nr_unique
                rel_metrics[rel_type]["fp"] += nr_no_matches
                rel_metrics[rel_type]["total_pred_ent"] += nr_entities
                rel_metrics[rel_type]["pred_om"] += nr_matches - nr_unique
                for t in ent_types:
                    ent_metrics[t]["tp"] += nr_matches_by_type[t]
                    ent_metrics[t]["fp"] += nr_no_matches_by_type[t]
                    ent_metrics[t]["total_pred_ent"] += nr_entities_by_type[t]
                    ent_metrics[t]["pred_om"] += nr_matches_by_type[t] - nr_unique_by_type[t]
            else:
                rel_metrics[rel_type]["fn"] += nr_no_matches
                rel_metrics[rel_type]["total_gold_ent"] += nr_entities
                rel_metrics[rel_type]["gold_om"] += nr_matches - nr_unique
                for t in ent_types:
                    ent_metrics[t]["fn"] += nr_no_matches_by_type[t]
                    ent_metrics[t]["total_gold_ent"] += nr_entities_by_type[t]
                    ent_metrics[t]["gold_om"] += nr_matches_by_type[t] - nr_unique_by_type[t]


def eval_rel_extraction_doc(prediction, gold, text, rel_types, ent_types, similarity_threshold):
    pred_match_by_type = get_relations_match_table(prediction)
    gold_match_by_type = get_relations_match_table(gold)
    for rel_type, pred_relations in pred_match_by_type.items():
        if rel_type not in gold_match_by_type:
            continue
        gold_rels_of_type = [g["relation"] for g in gold_match_by_type[rel_type].values()]
        for pred_rel_id in pred_relations:
            pred_relation = pred_relations[pred_rel_id]["relation"]
            gold_rel_id, entity_matches = pred_relation.get_most_similar_relation(gold_rels_of_type, text,
                                                                                  similarity_threshold)
            if gold_rel_id is not None:
                pred_match_by_type[rel_type][pred_rel_id]["matches"] = entity_matches
    for rel_type, gold_relations in gold_match_by_type.items():
        if rel_type not in pred_match_by_type:
            continue
        pred_rels_of_type = [p["relation"] for p in pred_match_by_type[rel_type].values()]
        for gold_rel_id in gold_relations:
            gold_rel = gold_relations[gold_rel_id]["relation"]
            pred_rel_id, entity_matches = gold_rel.get_most_similar_relation(pred_rels_of_type, text,
                                                                             similarity_threshold)
            if pred_rel_id is not None:
                gold_match_by_type[rel_type][gold_rel_id]["matches"] = entity_matches
    ent_metrics = get_default_metrics_dict(ent_types, 0)
    rel_metrics = get_default_metrics_dict(rel_types, 0)
    _count_side(pred_match_by_type, rel_metrics, ent_metrics, ent_types, True)
    _count_side(gold_match_by_type, rel_metrics, ent_metrics, ent_types, False)
    return rel_metrics, ent_metrics


def eval_rel_extraction(pred_rels, gold_rels, texts, paper_ids, rel_types, ent_types, similarity_threshold):
    rel_metrics = get_default_metrics_dict(rel_types, 0)
    ent_metrics = get_default_metrics_dict(ent_types, 0)
    class_metrics = get_default_metrics_dict(["relevant", "irrelevant"], 0)
    for pred, gold, text, pid in zip(pred_rels, gold_rels, texts, paper_ids, strict=True):
        JUDGE.doc = pid
        if pred and gold:
            class_metrics["relevant"]["tp"] += 1
        elif not pred and not gold:
            class_metrics["irrelevant"]["tp"] += 1
        elif pred and not gold:
            class_metrics["relevant"]["fp"] += 1
            class_metrics["irrelevant"]["fn"] += 1
        elif not pred and gold:
            class_metrics["relevant"]["fn"] += 1
            class_metrics["irrelevant"]["fp"] += 1
        doc_rel_metrics, doc_ent_metrics = eval_rel_extraction_doc(pred, gold, text, rel_types, ent_types,
                                                                   similarity_threshold)
        for rel_type in rel_types:
            for key in doc_rel_metrics[rel_type]:
                rel_metrics[rel_type][key] += doc_rel_metrics[rel_type][key]
        for ent_type in ent_types:
            for key in doc_ent_metrics[ent_type]:
                ent_metrics[ent_type][key] += doc_ent_metrics[ent_type][key]
    return (compute_eval_criteria(rel_metrics), compute_eval_criteria(ent_metrics),
            compute_eval_criteria(class_metrics))


# ---------------------------------------------------------------- driver (the scripts' data preparation)


def _readable_to_objects(rr: dict) -> tuple[dict[str, list[Relation]], list[RelationEntity]]:
    """`{relation_type: [Relation]}` and the flat entity list, old names renamed, empty coreference lists."""
    by_type: dict[str, list[Relation]] = {}
    flat: list[RelationEntity] = []
    for raw_type, rels in rr.items():
        rtype = RENAME.get(raw_type, raw_type)
        for rel in [rels] if isinstance(rels, dict) else rels:
            ents = {RENAME.get(et, et): spans for et, spans in rel.items()}
            r = Relation.from_entity_dictionaries(rtype, ents, {})
            by_type.setdefault(rtype, []).append(r)
            flat.extend(r.entities)
    return by_type, flat


def load_inputs(gold_path: str, pred_path: str, log_path: str) -> dict:
    """Read the three files into plain Python structures (the part that is not the scorer)."""
    csv.field_size_limit(64 * 1024 * 1024)
    with open(gold_path, encoding="utf-8-sig", newline="") as f:
        gold_rows = [(r["paper_id"], r["text"], json.loads(r["readable_relations"] or "{}"))
                     for r in csv.DictReader(f)]
    preds: dict[str, dict] = {}
    with open(pred_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                preds[rec["paper_id"]] = rec["relations"]
    answers: dict[tuple[str, str, str, str], str] = {}
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                t = RENAME.get(rec["entity_type"], rec["entity_type"])
                answers[(rec["paper_id"], t, rec["span1"], rec["span2"])] = rec["answer"]
    return {"gold": gold_rows, "preds": preds, "answers": answers}


def score(inputs: dict, similarity_threshold: float = 0.6) -> tuple[dict, dict[str, int]]:
    """(metrics {classification, entities, relations}, judge calls made: entity pass, relation pass, total)."""
    JUDGE.answers = inputs["answers"]
    JUDGE.calls = 0
    paper_ids, texts, gold_rels, pred_rels, gold_ents, pred_ents = [], [], [], [], [], []
    for pid, text, rr in inputs["gold"]:
        g_by_type, g_flat = _readable_to_objects(rr)
        p_by_type, p_flat = _readable_to_objects(inputs["preds"].get(pid, {}))
        paper_ids.append(pid)
        texts.append(text)
        gold_rels.append(g_by_type)
        pred_rels.append(p_by_type)
        gold_ents.append(g_flat)
        pred_ents.append(p_flat)
    entities = compute_entity_agreement(pred_ents, gold_ents, texts, paper_ids, ENTITY_TYPES)
    entity_calls = JUDGE.calls
    relations, _rel_entities, classification = eval_rel_extraction(pred_rels, gold_rels, texts, paper_ids,
                                                                   RELATION_TYPES, ENTITY_TYPES,
                                                                   similarity_threshold)
    calls = {"entity_pass": entity_calls, "relation_pass": JUDGE.calls - entity_calls, "total": JUDGE.calls}
    return {"classification": classification, "entities": entities, "relations": relations}, calls


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 3:
        raise SystemExit("usage: python bench/naive_chimera.py GOLD.csv PRED.jsonl JUDGE.jsonl")
    metrics, calls = score(load_inputs(*args))
    print(json.dumps(metrics | {"judge_calls": calls}, indent=1))


if __name__ == "__main__":
    main()
