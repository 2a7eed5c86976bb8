"""Pipeline stages, one module each, all defined the one way of :mod:`flows.kernel_context` (run by flows/kernel.py)."""
