"""mkdocs hooks: chronicle.yml is the one config (site_url, name, author, licence)."""

from chronicle.site import (  # noqa: F401  (mkdocs looks the hooks up by name)
    on_config,
    on_page_markdown,
    on_post_build,
    on_post_page,
)
