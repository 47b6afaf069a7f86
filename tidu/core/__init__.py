"""Core of the tensor layer: dtypes, shapes, devices, grad mode, primitives and bind."""
