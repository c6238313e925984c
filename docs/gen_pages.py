"""mkdocs-gen-files script: write every run-wide page from the store (no network)."""

from pathlib import Path

import mkdocs_gen_files

from chronicle.config import load_config
from chronicle.site import generate

generate(load_config(Path(mkdocs_gen_files.config.config_file_path).resolve().parent))
