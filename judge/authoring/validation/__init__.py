"""The checks of `judge validate`, one function per check; judge.authoring.validate runs them.

Each check takes what it needs (the package, its cases, a run of the author's solutions, the
mutation score) and writes what it found to a `Diagnostics` sink under its own name: an error
fails the package, a warning or a note does not. A check that later ones depend on (the package
loads, the runner finished, the reference passes) also returns whether they can run, so the
order and the points where validation stops are read in one place, `validate_package`.

- `diagnostics`: the sink and its records;
- `files`: what can be checked by reading the package (problem.toml, cases, statements,
  forbidden APIs, parts, solutions and their notes, change notes, coverage);
- `facts`: that no case computes a fact in the learner's process (read statically);
- `runs`: what the author's solutions do when run (runner, reference, determinism,
  properties, starter, accepted and wrong solutions);
- `scratch`: the scratch cell's snippets (problem.toml's `[scratch]`) run after the reference;
- `mutants`: whether the cases kill the reference's mutants, with feedback.
"""
