"""Offline, exact subgame inputs from a trunk strategy ([S] §1.4.2, §6; [H] §E.5).

The roots, reaches and opponent values of a subgame below a trunk, and the trunk and
subgame strategies combined (`trunk_inputs`; cfrd_eval's margins use them).
"""
