"""Boards: several systems scored on one gold, side by side, audited from one set of reviews (issue 36)."""
