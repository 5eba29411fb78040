"""The Textual app behind `wyckoff chat`. The only package that imports textual."""
