"""Mutation testing of problem packages: single-change mutants of the reference, which the
package's cases must tell apart from it (`judge validate` runs them)."""
