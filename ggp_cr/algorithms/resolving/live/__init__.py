"""The live-state path of continual resolving: subgames solved on pyspiel states.

For games above the compiled path's size limit only: the trace of the next turns, the
live solvers and `Resolver`, sharing the gadget, settings and protocol with the compiled path.
"""
