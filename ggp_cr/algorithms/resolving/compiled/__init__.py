"""The compiled path of continual resolving: subgames solved on integer arrays ([S] ch. 2).

Gadget views (copied, in place), their solvers (CFR+, dl_cfr+, sampling), the next
roots' estimates, warm starts and `CompiledResolver`; the default path.
"""
