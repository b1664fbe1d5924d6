"""Code the tests and the benchmarks share (see README.md): a regular package, as `tests` is, so that no installed
package of the same name can shadow it."""
