"""What happens to a built site, for any engine: the post-build step, the daily feed's
items, the staged site swapped in whole, `check-site`, release notes and `.zenodo.json`.
Nothing here imports an engine (tests/test_site_layout.py)."""
