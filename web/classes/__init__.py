"""Classes: an instructor's learners, their assignments, gradebook and board."""
