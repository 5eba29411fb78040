"""Tools the model can call: a schema plus a run function each (see base.py)."""
