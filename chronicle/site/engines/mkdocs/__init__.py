"""The mkdocs-material engine: the `chronicle` plugin and one mkdocs build per edition."""
