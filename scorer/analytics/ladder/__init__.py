"""`scorer ladder`: the parameter-free Ladder (rule.py), the board it would have shown beside the plain and private
ones (board.py), and its report (plot.py)."""
