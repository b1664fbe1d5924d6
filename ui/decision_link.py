"""One decision numbering in URLs (issue 40 point 7): a link to a decision carries its number in the run
(`decision_no=35`), as the card shows it ("decision #35") and `python -m audit review --decision '#35'` takes it;
`RunView.decision_numbers` / `RunView.decision_by_number` are the one rule between that number and the database id.

Links made before carried the id (`decision=1234`); they were shared and bookmarked, so they still open the
decision when the id is one of the run's (the page then rewrites the URL to the number)."""

from __future__ import annotations

from collections.abc import Mapping

from audit.views import RunView

URL_DECISION = "decision_no"
LEGACY_URL_DECISION = "decision"  # the database id, in links made before the number


def decision_param(number: int) -> dict[str, int]:
    """The query parameter of a link to decision `#number` (its number in the run: `RunView.decision_numbers`)."""
    return {URL_DECISION: number}


def _whole(text: object) -> int | None:
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if value > 0 else None


def linked_decision(run_view: RunView, query: Mapping[str, str]) -> int | None:
    """The id of the decision a URL's `query` names in `run_view` (its number; or, in an old link, its id), None
    when it names none of the run's decisions."""
    number = _whole(query.get(URL_DECISION, ""))
    if URL_DECISION in query:
        try:
            return run_view.decision_by_number(number) if number else None
        except KeyError:
            return None
    legacy = _whole(query.get(LEGACY_URL_DECISION, ""))
    if legacy is None:
        return None
    try:  # an id of another run counts its rank all the same: only an id that is its own number's id is the run's
        return legacy if run_view.decision_by_number(run_view.decision_numbers([legacy])[legacy]) == legacy else None
    except KeyError:
        return None
