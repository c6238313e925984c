"""What chronicle's child processes run, and nothing else of chronicle's: a render worker's
vl-convert calls (draw.py) and a Zensical build (zensical_build.py). A child unpickling a
function imports that function's module and its package, so this package imports nothing:
a worker starts without the renderers, mkdocs or Altair."""
