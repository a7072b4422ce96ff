"""Continual resolving ([S] ch. 2, §6; [H]); docs/algorithms/resolving.md maps it.

The bot (continual_resolving) over one seam (protocol.Resolver) with two paths:
compiled (default) and live; the gadget written once (gadget.prefix).
"""
