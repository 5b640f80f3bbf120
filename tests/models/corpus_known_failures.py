"""The (model, feature) pairs of the exporter corpus that fail today: each an
`xfail(strict=True)` in tests/models/test_exporter_corpus.py, so that a fix turns it into an
XPASS (a failure): whoever fixes it deletes its line. One entry per line, sorted; the reason
names the defect class and the item of issue 22.

`REFUSED` lists pairs where a clear refusal (ConversionError) is the right answer: the test
asserts the refusal.
"""

from __future__ import annotations

# Defect classes (the reasons of KNOWN_FAILURES).
F64_COMPUTED_AS_F32 = (
    "issue 22 item 8: OpenVINO's CPU plugin computes f64 in f32: GPcovstd, sqrt(k(x,x) - v.v), "
    "cancels and is 6e-4 (DotProduct) to 8e-3 (RBF) off sklearn's where onnxruntime is 1e-11 "
    "off; convert warns, check says so"
)
NPU_WHILE_COUNT_FROM_SHAPES = (
    "issue 22 item 9: NPU: the count is proven (T from static shapes), but the body reads "
    "x[i] as Slice(x, i, i + 1) at a counter i, of shape [..6,3] for OpenVINO (one row is not "
    "proven), and NPU needs static body shapes"
)
NPU_SEQUENCE_SHAPES_DYNAMIC = (
    "issue 22 item 9: NPU: a list appended in the loop is carried as a sequence's flat buffer "
    "and shape list, which grow each iteration (dynamic shapes), even with static inputs"
)
ILL_CONDITIONED = (
    "no item, outside our reach: the f32 export's GPcovstd, sqrt(k(x,x) - v.v), cancels in f32: "
    "onnxruntime is 0.024 off sklearn (14% of its largest value), openvino.convert_model 0.023; "
    "ov-loops is compared with onnxruntime and is 0.017 off it (GPmean agrees to 3e-5)"
)

# Why a refusal is right (the reasons of REFUSED).
STOPS_ON_DATA = "the loop stops on its data"
COUNT_IS_AN_INPUT = "the trip count is a run-time input value"
IF_OF_DYNAMIC_RANK = (
    "an If's branches return different ranks, which OpenVINO's CPU plugin cannot compile"
)

KNOWN_FAILURES: dict[tuple[str, str], str] = {
    ("skl_gaussian_process_dot_product", "default"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_dot_product", "max"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_dot_product", "none"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_dot_product", "npu"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_dot_product", "static-default"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_dot_product", "static-max"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_f32", "default"): ILL_CONDITIONED,
    ("skl_gaussian_process_f32", "max"): ILL_CONDITIONED,
    ("skl_gaussian_process_f32", "none"): ILL_CONDITIONED,
    ("skl_gaussian_process_f32", "npu"): ILL_CONDITIONED,
    ("skl_gaussian_process_f32", "static-default"): ILL_CONDITIONED,
    ("skl_gaussian_process_f32", "static-max"): ILL_CONDITIONED,
    ("skl_gaussian_process_f64", "default"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_f64", "max"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_f64", "none"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_f64", "npu"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_f64", "static-default"): F64_COMPUTED_AS_F32,
    ("skl_gaussian_process_f64", "static-max"): F64_COMPUTED_AS_F32,
    ("tf_while_tensor_array", "npu"): NPU_WHILE_COUNT_FROM_SHAPES,
    ("torch_ts_gru_by_hand_cat", "npu"): NPU_SEQUENCE_SHAPES_DYNAMIC,
}

REFUSED: dict[tuple[str, str], str] = {
    ("jax_while_greedy_decode", "npu"): STOPS_ON_DATA,
    ("jax_while_loop_count_input", "npu"): COUNT_IS_AN_INPUT,
    ("jax_while_loop_newton_sqrt", "npu"): STOPS_ON_DATA,
    ("onnxscript_for_range_count", "npu"): COUNT_IS_AN_INPUT,
    ("onnxscript_nested_for", "npu"): COUNT_IS_AN_INPUT,
    ("onnxscript_while_collatz", "npu"): STOPS_ON_DATA,
    ("onnxscript_while_newton", "npu"): STOPS_ON_DATA,
    ("skl_knn_imputer", "default"): IF_OF_DYNAMIC_RANK,
    ("skl_knn_imputer", "max"): IF_OF_DYNAMIC_RANK,
    ("skl_knn_imputer", "none"): IF_OF_DYNAMIC_RANK,
    ("skl_knn_imputer", "npu"): IF_OF_DYNAMIC_RANK,
    ("skl_knn_imputer", "shapes"): IF_OF_DYNAMIC_RANK,
    ("skl_knn_imputer", "static-default"): IF_OF_DYNAMIC_RANK,
    ("skl_knn_imputer", "static-max"): IF_OF_DYNAMIC_RANK,
    ("tf_nested_while", "npu"): COUNT_IS_AN_INPUT,
    ("tf_while_loop_count_input", "npu"): COUNT_IS_AN_INPUT,
    ("tf_while_loop_f64", "npu"): COUNT_IS_AN_INPUT,
    ("tf_while_loop_newton", "npu"): STOPS_ON_DATA,
    ("torch_dynamo_while_converge", "npu"): STOPS_ON_DATA,
    ("torch_dynamo_while_count", "npu"): COUNT_IS_AN_INPUT,
    ("torch_ts_beam_search_topk", "npu"): COUNT_IS_AN_INPUT,
    ("torch_ts_count_input", "npu"): COUNT_IS_AN_INPUT,
    ("torch_ts_greedy_topk_growing", "npu"): COUNT_IS_AN_INPUT,
    ("torch_ts_kv_cache_list", "npu"): COUNT_IS_AN_INPUT,
    ("torch_ts_nested_runtime_inner", "npu"): COUNT_IS_AN_INPUT,
    ("torch_ts_while_break_append", "npu"): STOPS_ON_DATA,
    ("torch_ts_while_converge", "npu"): STOPS_ON_DATA,
}
