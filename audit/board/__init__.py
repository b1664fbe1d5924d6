"""Boards: several systems scored on one gold, side by side, audited from one set of reviews (issue 36)."""

BOARD_FORMATS = ("json", "csv", "latex")
"""The formats `python -m audit board export` writes (`audit.board.export`)."""
