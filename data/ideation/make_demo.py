"""Build the ideation demo inputs from the Si et al. (2024) reviews copied here.

Run: python3 data/ideation/make_demo.py

NOT an LLM judge: human reviewers stand in for it (no judge output for these ideas was released).
- Questions: one per topic and idea number k (e.g. `Coding-4`): the k-th idea of each condition (Human, AI,
  AI_Rerank; every topic has the same number of ideas per condition). Pairing by number is arbitrary: the study
  matched conditions by topic only. Question text: the study's topic, in our words.
- Ideas: titles only (the proposal texts are not in the upstream repository). AI ideas are named by their
  proposal file name (made readable); AI_Rerank ideas have no title upstream: an AI_Rerank idea that shares all
  its reviews with an AI idea (the same proposal) takes that idea's title, the others say so.
- absolute: each idea's first review (lowest row index) on novelty, feasibility, effectiveness, 1-10 mapped to
  1-5 as ceil(s / 2) (= round(1 + 4 (s - 1) / 9)); rationale = that reviewer's rationale.
- human_reviews: every other review of an idea (reviewers 2-4) as a human review of its rating decisions, 1-10
  mapped to 1-5 the same way, blind (the study's reviewers saw neither the "judge" nor each other); reviewer names
  are positions ("si2024 reviewer 2"), not persons: the study's reviewer ids are not in the tidy table.
- pairwise: for ideas a < b (by system name), the call with a shown first compares reviewer 1's scores of a and
  b, the call with b first compares reviewer 2's scores (higher wins, equal = tie). A "split" therefore means the
  two reviewers ordered the pair differently: the position-bias figures of this demo measure reviewer
  disagreement, not position bias.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
CRITERIA = ("novelty", "feasibility", "effectiveness")
SYSTEMS = ("Human", "AI", "AI_Rerank")
TOPICS = {
    "Bias": "novel prompting methods to reduce social biases and stereotypes of large language models",
    "Coding": "novel prompting methods for large language models to improve code generation",
    "Factuality": "novel prompting methods that improve factuality and reduce hallucination of large language models",
    "Math": "novel prompting methods for large language models to improve mathematical problem solving",
    "Multilingual": "novel prompting methods to improve large language models' performance on multilingual tasks, "
                    "low-resource languages or vernacular languages",
    "Safety": "novel prompting methods to improve large language models' robustness against adversarial attacks "
              "or their security or privacy",
    "Uncertainty": "novel prompting methods to better quantify uncertainty or calibrate the confidence of large "
                   "language models",
}


def to_five(s10: int) -> int:
    """1-10 -> 1-5 integer: ceil(s / 2), the rounded linear map 1 + 4 (s - 1) / 9."""
    return math.ceil(s10 / 2)


def _titles(scores: pd.DataFrame) -> dict[str, tuple[str, str]]:
    mapping = pd.read_csv(HERE / "si2024_id_title_mapping.csv", dtype=str)
    titles = {}
    for idea, t in zip(mapping["ID"].str.strip(), mapping["Title / Filename"].str.strip(), strict=True):
        if t.endswith(".json"):
            t = t.removesuffix(".json").replace("_", " ").strip().capitalize()
            titles[idea] = (t, "proposal file name (made readable)")
        else:
            titles[idea] = (t, "title")
    dup = scores[scores["is_cross_condition_duplicate"]]
    for _, ideas in dup.groupby("shared_review_group")["idea_id"]:
        ai = [i for i in ideas if i.endswith("_AI")]
        rerank = [i for i in ideas if i.endswith("_AI_Rerank")]
        for r in rerank:
            if r not in titles and ai and ai[0] in titles:
                titles[r] = (titles[ai[0]][0], f"title of {ai[0]}, which shares all its reviews")
    return titles


def build() -> dict[str, list[dict]]:
    """The three demo files' lines: {"ideas": [...], "absolute": [...], "pairwise": [...]}."""
    scores = pd.read_csv(HERE / "si2024_ideation_scores.csv", dtype={"idea_id": str})
    scores["idea_id"] = scores["idea_id"].str.strip()
    reviews = json.loads((HERE / "si2024_ideation_reviews.json").read_text(encoding="utf-8"))
    titles = _titles(scores)
    by_idea = {i: g.sort_values("review_idx") for i, g in scores.groupby("idea_id")}
    ideas, absolute, pairwise, human = [], [], [], []
    for topic, text in TOPICS.items():
        n = int(scores[(scores["topic"] == topic) & (scores["condition"] == "Human")]["idea_id"].nunique())
        for k in range(1, n + 1):
            qid = f"{topic}-{k}"
            question = (f"{text[0].upper()}{text[1:]} (Si et al. 2024 topic {topic!r}; "
                        f"pool = idea {k} of each condition)")
            first_two = {}
            for system in SYSTEMS:
                idea_id = f"{topic}_{k}_{system}"
                title, source = titles.get(idea_id, (f"(title not released upstream; idea {idea_id})", "none"))
                ideas.append({"question_id": qid, "question": question, "system": system, "idea": title,
                              "idea_id": idea_id, "title_source": source})
                rows = by_idea[idea_id]
                first_two[system] = [rows.iloc[0], rows.iloc[1]]
                r0 = rows.iloc[0]
                for c in CRITERIA:
                    s10 = int(r0[f"{c}_score"])
                    rationale = reviews[f"{c}_rationale"][int(r0["review_idx"])]
                    absolute.append({"question_id": qid, "system": system, "criterion": c, "score": to_five(s10),
                                     "rationale": rationale,
                                     "raw": f"reviewer 1 (row {int(r0['review_idx'])}): {s10}/10"})
                    for pos in range(1, len(rows)):  # the other reviewers' ratings, imported as human reviews
                        r = rows.iloc[pos]
                        h10 = int(r[f"{c}_score"])
                        human.append({"uid": f"si2024-{int(r['review_idx'])}-{c}-{qid}-{system}", "doc": qid,
                                      "kind": "rating", "type": c, "left": system, "right": "",
                                      "reviewer": f"si2024 reviewer {pos + 1}", "label": str(to_five(h10)),
                                      "role": "reviewer", "blind": True, "created": "2024-09-06T00:00:00+00:00",
                                      "note": f"Si et al. review row {int(r['review_idx'])}: {h10}/10, mapped to "
                                              "1-5 as ceil(s/2)"})
            for c in CRITERIA:
                for a, b in _pairs(SYSTEMS):
                    for reviewer, (first, second) in enumerate(((a, b), (b, a))):
                        x = int(first_two[first][reviewer][f"{c}_score"])
                        y = int(first_two[second][reviewer][f"{c}_score"])
                        verdict = "first" if x > y else "second" if y > x else "tie"
                        pairwise.append({"question_id": qid, "criterion": c, "first": first, "second": second,
                                         "verdict": verdict,
                                         "rationale": f"derived from reviewer {reviewer + 1}'s scores: {first} "
                                                      f"{x}/10, {second} {y}/10",
                                         "raw": None})
    return {"ideas": ideas, "absolute": absolute, "pairwise": pairwise, "human_reviews": human}


def _pairs(systems: tuple[str, ...]) -> list[tuple[str, str]]:
    s = sorted(systems)
    return [(a, b) for i, a in enumerate(s) for b in s[i + 1:]]


def write(folder: Path = HERE) -> None:
    for name, lines in build().items():
        (folder / f"demo_{name}.jsonl").write_text(
            "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


if __name__ == "__main__":
    write()
