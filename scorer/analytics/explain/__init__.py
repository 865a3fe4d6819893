"""`scorer explain`: the published evaluators as our metrics plus rules (conventions.py) and a file scored under them
(published.py, the id shape), the impression shape's conventions (impressions.py) and the string shapes' rules turned one at a
time (rules.py)."""
