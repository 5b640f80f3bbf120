"""ai.onnx.ml ops OpenVINO cannot convert, rewritten into standard ONNX before conversion
(frontends/onnx/rewrites/): ArrayFeatureExtractor, which skl2onnx's nearest-neighbour models
put beside their Scan (issue 22 item 8). Each case is compared with onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.errors import UnsupportedError
from tests.harness import (
    assert_matches_onnxruntime,
    assert_one_line_error,
    compile_f32,
    run_cli,
    write,
)
from tests.onnx_builders import ELEMENT_TYPES, T, const, graph, node, typed

RNG = np.random.default_rng(22)
ML = onnx.helper.make_opsetid("ai.onnx.ml", 1)


def with_ml(main: onnx.GraphProto, opset: int = 17) -> onnx.ModelProto:
    """A model of `main` importing ai.onnx `opset` and ai.onnx.ml 1."""
    made = onnx.helper.make_model(main, opset_imports=[onnx.helper.make_opsetid("", opset), ML])
    made.ir_version = 10
    return made


def extractor(inputs=("x", "y"), output="z", name="afe") -> onnx.NodeProto:
    return node("ArrayFeatureExtractor", inputs, [output], domain="ai.onnx.ml", name=name)


def extractor_model(x_shape, y_shape, dtype: str, x_constant: bool) -> onnx.ModelProto:
    """z = ArrayFeatureExtractor(x, y), x an input or an initializer, y an int64 input."""
    elem_type, _ = ELEMENT_TYPES[dtype]
    data = typed("x", elem_type, list(x_shape))
    initializers = (
        [const("x", sample(x_shape, dtype), ELEMENT_TYPES[dtype][1])] if x_constant else []
    )
    inputs = [typed("y", T.INT64, list(y_shape))] + ([] if x_constant else [data])
    return with_ml(graph([extractor()], inputs, [typed("z", elem_type, None)], initializers))


def sample(shape, dtype: str) -> np.ndarray:
    return (RNG.standard_normal(shape) * 100).astype(ELEMENT_TYPES[dtype][1])


CASES = [  # (x shape, y shape): the indices of every shape, on the last axis of every rank
    ((5,), (2,)),
    ((5,), ()),
    ((5,), (2, 3)),  # rank-1 x: z is [1, 6]
    ((3, 4), (2,)),
    ((3, 4), ()),
    ((3, 4), (1, 2)),
    ((3, 4), (2, 2)),
    ((2, 3, 4), (1, 1, 1)),
    ((2, 3, 4), (3, 2)),
]


@pytest.mark.parametrize("x_shape, y_shape", CASES)
@pytest.mark.parametrize("x_constant", [False, True], ids=["x-input", "x-constant"])
def test_array_feature_extractor_matches_onnxruntime(tmp_path, x_shape, y_shape, x_constant):
    made = extractor_model(x_shape, y_shape, "float32", x_constant)
    last = x_shape[-1]
    runs = [{"y": RNG.integers(0, last, y_shape).astype(np.int64)} for _ in range(2)]
    if not x_constant:
        runs = [{**feeds, "x": sample(x_shape, "float32")} for feeds in runs]
    assert_matches_onnxruntime(made, runs, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "int64", "int32"])
def test_array_feature_extractor_element_types(tmp_path, dtype):
    """Every numeric type the op allows. Gather copies: exact for integers; f64 within one f32
    rounding (OpenVINO's CPU plugin computes f64 as f32)."""
    made = extractor_model((3, 4), (2,), dtype, x_constant=False)
    runs = [{"x": sample((3, 4), dtype), "y": np.array([3, 0], np.int64)}]
    assert_matches_onnxruntime(made, runs, tmp_path, rtol=2.0**-24, atol=0)


def test_array_feature_extractor_of_no_rows(tmp_path):
    """A batch of zero rows after one of three (x of a symbolic batch: OpenVINO's CPU plugin
    dies with SIGFPE compiling a Gather whose data has a static zero dim, any Gather)."""
    made = extractor_model(("N", 4), (2,), "float32", x_constant=False)
    y = np.array([2, 0], np.int64)
    runs = [{"x": sample((n, 4), "float32"), "y": y} for n in (3, 0)]
    assert_matches_onnxruntime(made, runs, tmp_path, rtol=0, atol=0)


def test_array_feature_extractor_negative_index_counts_from_the_end():
    """onnxruntime fails at run time on a negative index; the IR cannot fail at run time, and
    counts it from the end, as Gather and onnx.reference do."""
    made = extractor_model((3, 4), (2,), "float32", x_constant=False)
    compiled = compile_f32(ov_loops.convert(made))
    x = sample((3, 4), "float32")
    got = compiled({"x": x, "y": np.array([-1, 1], np.int64)})[0]
    np.testing.assert_array_equal(got, x[:, [3, 1]])


def test_array_feature_extractor_in_a_scan_body(tmp_path):
    """As skl2onnx's KNN: per row of q, the labels of the 2 nearest of 5 points, computed in a
    Scan body (the rewrite reaches nested graphs)."""
    labels = const("labels", [10.0, 20.0, 30.0, 40.0, 50.0])
    body = graph(
        [
            node("Sub", ["points", "row"], ["diff"]),
            node("ReduceSumSquare", ["diff"], ["dist"], axes=[1], keepdims=0),
            node("Neg", ["dist"], ["score"]),
            node("TopK", ["score", "k"], ["_", "nearest"]),
            extractor(("labels", "nearest"), "near_labels", name="body_afe"),
            node("Identity", ["acc_in"], ["acc_out"]),
        ],
        [typed("acc_in", T.FLOAT, [1]), typed("row", T.FLOAT, [3])],
        [typed("acc_out", T.FLOAT, [1]), typed("near_labels", T.FLOAT, [1, 2])],
        name="body",
    )
    scan = node("Scan", ["acc", "q"], ["acc_final", "z"], body=body, num_scan_inputs=1)
    main = graph(
        [scan],
        [typed("q", T.FLOAT, ["N", 3]), typed("acc", T.FLOAT, [1])],
        [typed("acc_final", T.FLOAT, [1]), typed("z", T.FLOAT, ["N", 1, 2])],
        [labels, const("points", RNG.standard_normal((5, 3))), const("k", [2], np.int64)],
    )
    runs = [
        {"q": RNG.standard_normal((n, 3)).astype(np.float32), "acc": np.zeros(1, np.float32)}
        for n in (4, 1)
    ]
    assert_matches_onnxruntime(with_ml(main), runs, tmp_path, rtol=0, atol=0)


def test_array_feature_extractor_of_strings_is_refused(tmp_path):
    """String class labels (a KNeighborsClassifier fitted on strings): one line, exit 1."""
    classes = onnx.helper.make_tensor("x", T.STRING, [3], [b"a", b"b", b"c"])
    made = with_ml(
        graph([extractor()], [typed("y", T.INT64, [2])], [typed("z", T.STRING, None)], [classes])
    )
    result = run_cli("convert", str(write(tmp_path, made)), "-o", str(tmp_path / "o.xml"))
    assert_one_line_error(result, 1, "ai.onnx.ml.ArrayFeatureExtractor-1 at main/afe", "string")
    assert not (tmp_path / "o.xml").exists()


@pytest.mark.parametrize(
    "data, reason",
    [
        (typed("x", T.FLOAT, []), "is a scalar"),
        (typed("x", T.FLOAT, None), "rank of its input X 'x' is unknown"),
    ],
    ids=["scalar", "unknown-rank"],
)
def test_array_feature_extractor_refusals(data, reason):
    made = with_ml(
        graph([extractor()], [data, typed("y", T.INT64, [2])], [typed("z", T.FLOAT, None)])
    )
    with pytest.raises(UnsupportedError, match=reason):
        ov_loops.convert(made)


CORPUS = Path(__file__).resolve().parents[3] / "models" / "exporters"
SKL2ONNX_EXTRACTORS = [  # the corpus's skl2onnx exports holding an ArrayFeatureExtractor
    "skl_knn_classifier_cosine",
    "skl_knn_classifier_distance_weights",
    "skl_knn_classifier_euclidean",
    "skl_knn_classifier_manhattan",
    "skl_knn_classifier_minkowski_p3",
    "skl_knn_regressor_euclidean",
    "skl_knn_regressor_multi_target_distance",
    "skl_radius_neighbors_regressor",
]


@pytest.mark.parametrize("name", SKL2ONNX_EXTRACTORS)
def test_skl2onnx_nearest_neighbours_match_onnxruntime(tmp_path, name):
    """The real exports (tests/models/exporters), both input sets, against onnxruntime (two
    of them differ from sklearn as onnxruntime does: skl2onnx exports weights='distance' as
    uniform weights)."""
    made = onnx.load(CORPUS / f"{name}.onnx")
    runs = [dict(np.load(CORPUS / f"{name}.{which}.npz")) for which in ("inputs", "inputs2")]
    assert_matches_onnxruntime(made, runs, tmp_path, rtol=1e-5, atol=1e-6)
