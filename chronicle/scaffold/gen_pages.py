"""mkdocs-gen-files runs this script in every build of this chronicle: it writes the pages
chronicle rendered from the store (run-wide pages, charts, feeds, API, each sealed day as
published) into the build, as generated files. Add your own generated pages below."""

from chronicle.site.gen_pages import write_pages

write_pages()
