"""Dataset card templates shipped with the package (`sandmle-tasks.md` links to `dataset_cards/` in the repo)."""
