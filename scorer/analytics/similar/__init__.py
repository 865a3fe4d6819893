"""`scorer similar`: each file's one-pass session sketch (sketch.py), the pairs and their figures (pairs.py), the
parser's defaults (defaults.py: imports nothing) and the report page (page.py)."""
