"""The resolving gadget ([S] §1.4.2, ch. 2, §6; [H] §G-I).

`prefix`: each root's chance, scale, shift, gate and Terminate value (numpy, written
once); `gadget_game`: the pyspiel reference game built from them.
"""
