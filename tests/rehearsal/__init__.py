"""The nightly rehearsal (`make rehearse`, `python -m tests.rehearsal`): runner.py runs the
nightly workflow's own `run:` steps night after night, world.py is what the fake W&B and
GitHub servers serve each night, checks.py is what must hold after each night."""
