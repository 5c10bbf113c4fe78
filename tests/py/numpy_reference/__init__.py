"""Vectorized numpy references for the cortex_m int8 ops, written apart from the C++ kernels.

They follow CMSIS-NN's arithmetic (TFLite-compatible) with double-rounding requantize; one module
per op family.
"""
