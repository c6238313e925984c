"""What the tests share, so that no test module imports another: config builders, git and
workflow-step helpers, fake W&B and GitHub servers, a small-chronicle factory, and the
golden list of sealed bytes (`python -m tests.support.goldens` regenerates it)."""
