"""The stages of the exported kernels: each stage is one module compiled ahead of time (scorer.kernels.aot), and which
kernels it exports is also what a module must hold to serve as that stage. Plain data: door.py and aot.py both read it.
"""

from __future__ import annotations

# stage: {exported name: "kernels module" or "kernels module.function" (a variant of a function under another name)}
STAGES: dict[str, dict[str, str]] = {
    "score": {"parse_block": "parse", "merge_rows": "parse", "figure_sums": "rank", "figures_from_hits": "rank",
              "merge_rows_uint32": "parse.merge_rows", "figure_sums_uint32": "rank.figure_sums",
              "figures_from_hits_uint32": "rank.figures_from_hits", "frame_rows": "frame_rows", "accumulate": "exact_sum"},
    "strings": {"parse_strings_block": "string_ids", "count_slots": "string_ids", "first_rows": "string_ids", "place_by_slot": "string_ids",
                "finish_long": "string_ids", "finish_long_runs": "string_ids", "fill_table": "strings", "count_byte": "strings",
                "read_rows": "strings", "parse_table_block": "table_rows", "merge_table_rows": "table_rows",
                "finish_table_long": "table_rows"},
    "explain": {"explain_block": "explain_rows", "merge_explain_rows": "explain_rows", "convention_sums": "conventions",
                "place_truth_rows": "truth_rows", "rows_missing_beside_others": "truth_rows"},
    "candidates": {"candidate_runs": "candidates", "string_codes": "candidates"},
    "resample": {"hash_units": "resample", "hash_strings": "resample", "stream_seeds": "resample", "group_rows": "resample",
                 "poisson_draws": "resample", "sign_flip_draws": "resample", "session_poisson_weights": "resample",
                 "resampled_block_sums": "resample", "rank_histogram": "resample", "hit_counts": "resample"},
    "prepare": {"parse_jsonl": "holdout", "run_starts": "holdout", "copy_checked_int32": "holdout.copy_checked",
                "copy_checked_int64": "holdout.copy_checked", "copy_checked_int8": "holdout.copy_checked",
                "unordered_sessions": "holdout", "sort_sessions_by_time": "holdout", "max_ts_of": "holdout", "split_roles": "holdout",
                "train_item_bitmap": "holdout", "filter_test": "holdout", "cut_points": "holdout", "labels_after_cut": "holdout",
                "gather_events": "holdout", "format_sessions": "holdout", "format_labels": "holdout", "splitmix64": "hashing"},
    "audit": {"write_rows": "submission_rows"},
    "partitions": {"session_partitions": "hashing", "partition_of_ids": "hashing", "string_partitions": "hashing",
                   "strings_known": "hashing", "jsonl_sessions": "hashing", "gather_lines": "hashing"},
    "solution": {"plain_ids": "solution", "label_items": "solution"},
    "impressions": {"impression_block": "impressions", "fill_missing": "impressions", "count_lines": "impressions",
                    "read_impression_truth": "impressions", "impression_frame_rows": "impressions"},
}
# "module.function": why a jitted function no command runs is not compiled ahead of time
JIT_ONLY: dict[str, str] = {}
STAGE_OF = {name: stage for stage, names in STAGES.items() for name in names}
