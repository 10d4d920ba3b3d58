"""The HTML pages: Jinja2 templates, zh/en catalogs, and the routes that render them."""
