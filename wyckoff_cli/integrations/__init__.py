"""Adapters that let other frameworks run Wyckoff (Harbor: `integrations/harbor.py`)."""
