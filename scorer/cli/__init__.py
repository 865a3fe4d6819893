"""The `scorer` command: argparse lives here and only here; one module per command (HELP, add_arguments, run).
"""
