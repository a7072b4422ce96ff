"""Example scripts with absl flags: python -m ggp_cr.examples.<name>."""
