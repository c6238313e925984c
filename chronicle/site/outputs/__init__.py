"""What an edition is made of, for any engine: the store read once, the page registry,
the sources and the charts' SVGs, the API and citable files, the tree of plain files.
Nothing here imports an engine (tests/test_site_layout.py)."""
