"""CPU kernels compiled by Numba (``cache=True``: a warm start loads them from disk)."""
