"""Pipeline stages, one module each, all defined the one way of :mod:`cinesub.stage`."""
