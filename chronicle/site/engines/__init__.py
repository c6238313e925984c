"""One folder per engine a chronicle builds with (`site.engine`): mkdocs/ (mkdocs-material
on ProperDocs, through the `chronicle` plugin) and zensical/ (Zensical, from the tree of
plain files). Each reaches its engine through public names only."""
