"""Rejudge's tests, a regular package so that `tests.conftest` and `tests.<folder>` always mean these files: a
dependency may install a top-level `tests` package of its own (ppi-python does), which would shadow a namespace
package."""
