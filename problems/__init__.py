"""The shipped problem packages, one folder each (data, not modules: nothing here is imported).

Installed, this folder is the package `llm_judge_problems`, which is how an installed `judge`
finds them (judge.settings.shipped_problems)."""
