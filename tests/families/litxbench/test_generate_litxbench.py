"""`bench/generate.py N DIR --family litxbench` (#38): N papers drawn from the bundled 19, seeded, each a real gold /
prediction / text triple under a new id, and the same files for the same N and seed."""

from __future__ import annotations

from devtools.generate_litxbench import DATA, VARIANTS, generate_litxbench
from scoring.families import get_task


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_papers_are_bundled_triples_under_new_ids_and_the_seed_fixes_them(tmp_path):
    kinds = generate_litxbench(25, tmp_path / "a", seed=3)
    generate_litxbench(25, tmp_path / "b", seed=3)
    generate_litxbench(25, tmp_path / "c", seed=4)
    a = _files(tmp_path / "a")
    assert a == _files(tmp_path / "b")
    assert a != _files(tmp_path / "c")
    assert sum(kinds.values()) == 25 and all(kinds[v] > 0 for v in VARIANTS)
    gold = sorted(k for k in a if k.startswith("gold/"))
    assert len(gold) == 25 and len({k.rsplit("-", 1)[0] for k in gold}) > 5  # drawn from many bundled papers
    for k in gold:
        paper = k.removeprefix("gold/").removesuffix(".json")
        orig = paper.rsplit("-", 1)[0]
        assert a[k] == (DATA / "gold" / f"{orig}.json").read_bytes()
        assert a[f"papers/{paper}.md"] == (DATA / "papers" / f"{orig}.md").read_bytes()
        assert a[f"pred/{paper}.json"] in [(DATA / v / f"{orig}.json").read_bytes() for v in VARIANTS]
    loaded = get_task("litxbench").load({"gold": str(tmp_path / "a" / "gold"), "pred": str(tmp_path / "a" / "pred")})
    assert len(loaded.docs) == 25
