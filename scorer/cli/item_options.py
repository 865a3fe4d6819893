"""--items, --train and --metrics of `scorer score` and `scorer compare`: the item table and the extra diagnostics."""

from __future__ import annotations


def add_arguments(parser) -> None:
    """--items, --train and --metrics of `scorer score` and `scorer compare`."""
    parser.add_argument("--items", metavar="FILE", help="item table for the beyond-accuracy metrics (.parquet or .csv): "
                        "item id (item/aid/item_id), optional popularity, category and emb* columns")
    parser.add_argument("--train", metavar="FILE", help="training log (train_sessions .jsonl/.parquet of scorer prepare): "
                        "item popularity for the beyond-accuracy metrics")
    parser.add_argument("--metrics", metavar="LIST", help="extra diagnostics, comma-separated, e.g. 'novelty@20,gini@20,auc@20'")


def from_args(args, competition):
    """(competition with the --metrics diagnostics added, ItemSide or None) from the command's options
    (scorer.jobs.options.with_items)."""
    from scorer.api import resolve_competition  # here, not above: building the parser loads no kernels
    from scorer.jobs.options import with_items

    return with_items(resolve_competition(competition, args.config), getattr(args, "metrics", None), getattr(args, "items", None),
                      getattr(args, "train", None))
