"""`make bench`: how chronicle's cost compares with plain mkdocs and grows with the run."""
