"""After an accepted submission: the reference and the other accepted formulations (issue 20, item 8)."""
