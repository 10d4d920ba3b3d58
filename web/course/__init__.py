"""The course: chapters in order, prerequisites, the next problem, progress (issue 20, item 7)."""
