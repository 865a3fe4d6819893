"""--items, --train and --metrics of `scorer score` and `scorer compare`: the item table and the extra diagnostics."""

from __future__ import annotations

import dataclasses

from scorer.errors import UsageError


def add_arguments(parser) -> None:
    """--items, --train and --metrics of `scorer score` and `scorer compare`."""
    parser.add_argument("--items", metavar="FILE", help="item table for the beyond-accuracy metrics (.parquet or .csv): "
                        "item id (item/aid/item_id), optional popularity, category and emb* columns")
    parser.add_argument("--train", metavar="FILE", help="training log (train_sessions .jsonl/.parquet of scorer prepare): "
                        "item popularity for the beyond-accuracy metrics")
    parser.add_argument("--metrics", metavar="LIST", help="extra diagnostics, comma-separated, e.g. 'novelty@20,gini@20,auc@20'")


def from_args(args, competition):
    """(competition with the --metrics diagnostics added, ItemSide or None) from the command's options."""
    from scorer.api import resolve_competition  # here, not above: building the parser loads no kernels
    from scorer.spec.metrics import parse_metric, split_metrics
    from scorer.truth.items import from_train, read_items

    if getattr(args, "items", None) and getattr(args, "train", None):
        raise UsageError("give --items or --train, not both (the table's popularity column, or counts from the log)")
    competition = resolve_competition(competition, args.config)
    extra = []
    for text in split_metrics(getattr(args, "metrics", None) or ""):
        try:
            metric = parse_metric(text)
        except ValueError as error:
            raise UsageError(f"--metrics: {error}") from None
        if metric.k is not None and metric.k > competition.k:
            raise UsageError(f"--metrics: {metric} reads more than the competition's k = {competition.k} items")
        if metric.family == "beyond" and (competition.shape != "id_type" or metric.k > 63):
            raise UsageError(f"--metrics: {metric} needs shape 'id_type' (integer item ids) and K at most 63")
        if metric.family in ("ranking", "set", "beyond") and metric not in competition.metrics:
            extra.append(metric)
        elif metric.family not in ("ranking", "set", "beyond"):
            raise UsageError(f"--metrics: {metric} cannot be added to {competition.name}'s diagnostics")
    if extra:
        competition = dataclasses.replace(competition, diagnostics=(*competition.diagnostics, *extra))
    items = read_items(args.items) if getattr(args, "items", None) else from_train(args.train) if getattr(args, "train", None) else None
    return competition, items
