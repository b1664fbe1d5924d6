"""The run overview keeps its costly reads (every document's row and the strict-variant differences) per review
state (`ui.state.review_state`, issue 25): a review made after a cached render shows on the next render, and two
runs (or two policies) never share an entry. Expected values are read through a fresh, uncached view."""

import re

import pytest

from audit.review.reviews import add_review, allowed_labels
from audit.views import load_view
from scoring.families.chimera import strict
from tests.app.conftest import open_page, table

DEMO, OTHER = "demo-chimera-mixed", "demo-chimera-smollm2"


def _overrule(d: dict) -> str:
    """A label other than the judge's for decision `d` (a CHIMERA run's)."""
    return next(x for x in allowed_labels("chimera", d["kind"]) if x != d["judge"])


def _docs_table(at) -> dict[str, tuple[str, int]]:  # noqa: ANN001 - an AppTest
    t = table(at, "open", "reviewed")
    return {d: (o, int(r)) for d, o, r in zip(t.iloc[:, 0], t["outcome (audited)"], t["reviewed"], strict=True)}


def _fresh_docs(conn, run: str) -> dict[str, tuple[str, int]]:  # noqa: ANN001
    return {d["doc"]: (d["audited_outcome"], d["reviewed"]) for d in load_view(conn, run).documents()}


def _variant_caption(at) -> tuple[int, int]:  # noqa: ANN001
    for c in at.caption:
        m = re.match(r"(\d+) of (\d+) abstracts score differently", c.value)
        if m:
            return int(m[1]), int(m[2])
    raise AssertionError("no strict-variant caption")


def _fresh_differing(conn, run: str) -> int:  # noqa: ANN001
    return len(strict.differing_documents(load_view(conn, run).audited_doc_counts()))


def _outcome(at) -> None:  # noqa: ANN001 - every outcome shown, so every document is in the table
    at.multiselect(key="overview.outcomes").set_value(list(at.multiselect(key="overview.outcomes").options)).run()


def test_a_review_after_a_cached_render_shows_on_the_next_render(app, conn):
    at = open_page(app, "overview", reviewer="cacher", run=DEMO)
    _outcome(at)
    before = _docs_table(at)
    assert before == _fresh_docs(conn, DEMO)
    at.run()  # a second render: now from the cache
    assert _docs_table(at) == before
    view = load_view(conn, DEMO)
    # overrule decisions until a document's audited outcome and the strict-variant count both have changed
    changed_outcome = changed_diffs = False
    diffs_before = _fresh_differing(conn, DEMO)
    assert _variant_caption(at) == (diffs_before, len(before))
    for d in view.decisions():
        if changed_outcome and changed_diffs:
            break
        add_review(conn, DEMO, d["id"], _overrule(d), "cacher")
        at.run()
        assert not at.exception
        shown, fresh = _docs_table(at), _fresh_docs(conn, DEMO)
        assert shown == fresh  # the review is counted at once
        assert shown[d["doc"]][1] >= 1
        changed_outcome |= any(fresh[k][0] != before[k][0] for k in fresh)
        n = _fresh_differing(conn, DEMO)
        assert _variant_caption(at) == (n, len(before))
        changed_diffs |= n != diffs_before
    assert changed_outcome and changed_diffs  # the test exercised a change of both cached reads


@pytest.mark.parametrize("first, second", [(DEMO, OTHER), (OTHER, DEMO)])
def test_two_runs_never_share_an_entry(app, conn, first, second):
    at = open_page(app, "overview", reviewer="cacher", run=first)
    _outcome(at)
    assert _docs_table(at) == _fresh_docs(conn, first)
    at.query_params["run"] = second
    at.run()
    assert at.session_state["current_run"] == second
    _outcome(at)
    assert _docs_table(at) == _fresh_docs(conn, second)
    assert _fresh_docs(conn, first) != _fresh_docs(conn, second)  # else the check above proves nothing
    assert _variant_caption(at)[0] == _fresh_differing(conn, second)


def test_the_policy_is_part_of_the_key(app, conn):
    from audit.effective import POLICIES
    from ui.state import POLICY_KEY

    for d in load_view(conn, DEMO).decisions()[:40]:  # two overrule, one confirms: majority and unanimous differ
        overrule = _overrule(d)
        confirm = next(x for x in allowed_labels("chimera", d["kind"]) if x != overrule)
        for who, label in (("r1", overrule), ("r2", overrule), ("r3", confirm)):
            add_review(conn, DEMO, d["id"], label, who)
    fresh = {p: {d["doc"]: (d["audited_outcome"], d["reviewed"]) for d in load_view(conn, DEMO, p).documents()}
             for p in POLICIES}
    assert len({tuple(sorted(f.items())) for f in fresh.values()}) == len(POLICIES)  # else nothing is tested
    at = open_page(app, "overview", reviewer="cacher", run=DEMO)
    for p in [*POLICIES, *POLICIES]:  # each policy twice: the second render of each comes from the cache
        at.session_state[POLICY_KEY] = p
        at.run()
        _outcome(at)
        assert _docs_table(at) == fresh[p]
