"""The nightly rehearsal (`make rehearse`, `python -m tests.rehearsal`): runner.py runs the
nightly workflow's jobs night after night through chronicle's actions (each job's `with:`
as its action's inputs, then the action's own `run:` steps), world.py is what the fake
W&B and GitHub servers serve each night, checks.py is what must hold after each night."""
