"""Improving a judge from the reviews, and proving it on documents it never saw (issue #37; docs:
tables-and-trained-judges.md §2).

- `crossfit.py`: the items a strategy learns from, and K-fold cross-fitting by document: each fold's judge is fitted
  on the other folds' items only (the fitting function is never handed a held-out item).
- `threshold.py`: the `threshold` strategy for judges that compare a similarity score to a threshold.
- `calibrate.py`: the `calibrate` strategy for ordinal ratings (an isotonic map, held to scikit-learn's estimator).
- `evaluate.py`: the out-of-sample report (kappa before and after, the paired change and the claim rule, TPR/TNR
  with Wilson intervals, confusion matrices, disagreeing decisions, the headline metric's gap to the humans).
- `preflight.py`: when to refuse before fitting (humans who disagree with each other, too few documents).

Pure: no SQLite, no Streamlit, no `audit/`; a family comes in as an object (`scoring.families.base.TaskFamily`).
"""
