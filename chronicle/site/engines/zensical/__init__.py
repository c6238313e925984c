"""The Zensical engine: each edition's tree of plain files built by `zensical build`."""
