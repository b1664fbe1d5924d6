"""What a page or a command calls a thing it counts, with its plural declared once (a family's documents: `abstract`,
`query`; the shell's own: `decision`, `review row`). Imports nothing, so the lightest command can count with it."""

from __future__ import annotations


class Noun(str):
    """A counted thing's name (a `str`: the singular), with its plural and article declared once.

    >>> n = Noun("query", "queries"); (n, n.plural, n.a, n.count(1), n.count(3), Noun("abstract", article="an").a)
    ('query', 'queries', 'a query', '1 query', '3 queries', 'an abstract')
    """

    plural: str
    article: str

    def __new__(cls, singular: str, plural: str = "", article: str = "a") -> Noun:
        self = super().__new__(cls, singular)
        self.plural = plural or singular + "s"
        self.article = article
        return self

    @property
    def a(self) -> str:
        """The singular with its indefinite article: `an abstract`."""
        return f"{self.article} {self}"

    def count(self, n: int, *, grouped: bool = False) -> str:
        """`1 paper`, `3 papers`; `grouped`: with thousands separators (`100,000 abstracts`), for a page to read (a
        command's lines keep plain digits)."""
        number = f"{n:,}" if grouped else str(n)
        return f"{number} {self if n == 1 else self.plural}"
