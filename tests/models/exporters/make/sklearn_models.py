"""scikit-learn models exported by skl2onnx (run in /work/exporters/sklearn-venv; see README.md).

skl2onnx computes pairwise distances with a Scan (one row of the training set per iteration);
classifiers add ai.onnx.ml ops (ArrayFeatureExtractor). Inputs are typed [N, F] with N
unknown (no dim_param), as skl2onnx writes them. Expected outputs are sklearn's own
(predict, predict_proba, kneighbors, ...), cast to the graph's element type and reshaped to
the rank the graph declares (a regressor's [N] is [N, 1] in ONNX).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import skl2onnx
import sklearn
from skl2onnx import to_onnx
from sklearn.decomposition import KernelPCA
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel
from sklearn.impute import KNNImputer
from sklearn.neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    LocalOutlierFactor,
    NearestNeighbors,
    RadiusNeighborsRegressor,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_io import Registry  # noqa: E402

warnings.filterwarnings("ignore")
SCRIPT = "make/sklearn_models.py"
EXPORTER = f"skl2onnx {skl2onnx.__version__}"
FRAMEWORK = f"scikit-learn {sklearn.__version__}"
OPSET = 17
model = Registry(SCRIPT, EXPORTER, FRAMEWORK)


def data(seed, n, features=4, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal((n, features)).astype(dtype)


def export(name, est, x_train, predict, *, exercises, options=None, notes=None, dtype=np.float32):
    """Export fitted `est`; predict(X) -> {output: sklearn's value}; query sets of N=7 and 3."""
    proto = to_onnx(est, x_train[:1].astype(dtype), options=options, target_opset=OPSET)
    sets = [
        {"X": data(1000 + len(name), 7, x_train.shape[1], dtype)},
        {"X": data(2000 + len(name), 3, x_train.shape[1], dtype)},
    ]
    results = []
    for inputs in sets:
        want = predict(inputs["X"])
        outs = {}
        for value in proto.graph.output:
            tensor = value.type.tensor_type
            arr = np.asarray(want[value.name])
            arr = arr.astype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
            rank = len(tensor.shape.dim)
            outs[value.name] = (
                arr.reshape(arr.shape + (1,) * (rank - arr.ndim)) if rank > arr.ndim else arr
            )
        results.append(outs)
    return model.save(name, proto, sets, results, exercises, notes=notes)


def _classes(x):
    return (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)


DISTANCE_BUG = (
    "skl2onnx exports weights='distance' as uniform weights: the ONNX model (and "
    "onnxruntime) differ from sklearn; expected.npz is sklearn's"
)


def _knn_classifier(name, exercises, notes=None, **params):
    x = data(1, 40)
    est = KNeighborsClassifier(**params).fit(x, _classes(x))
    return export(
        name,
        est,
        x,
        lambda q: {"label": est.predict(q), "probabilities": est.predict_proba(q)},
        exercises=exercises,
        options={"zipmap": False},
        notes=notes,
    )


@model
def skl_knn_classifier_euclidean():
    return _knn_classifier(
        "skl_knn_classifier_euclidean",
        "KNeighborsClassifier(3), euclidean: Scan of distances, TopK, ArrayFeatureExtractor "
        "(ai.onnx.ml) for the labels",
        n_neighbors=3,
    )


@model
def skl_knn_classifier_manhattan():
    return _knn_classifier(
        "skl_knn_classifier_manhattan",
        "KNeighborsClassifier(5, metric='manhattan')",
        n_neighbors=5,
        metric="manhattan",
    )


@model
def skl_knn_classifier_minkowski_p3():
    return _knn_classifier(
        "skl_knn_classifier_minkowski_p3",
        "KNeighborsClassifier(4, metric='minkowski', p=3): Pow in the Scan body",
        n_neighbors=4,
        metric="minkowski",
        p=3,
    )


@model
def skl_knn_classifier_cosine():
    return _knn_classifier(
        "skl_knn_classifier_cosine",
        "KNeighborsClassifier(3, metric='cosine'): skl2onnx uses MatMul, no Scan (control)",
        n_neighbors=3,
        metric="cosine",
    )


@model
def skl_knn_classifier_distance_weights():
    return _knn_classifier(
        "skl_knn_classifier_distance_weights",
        "KNeighborsClassifier(4, weights='distance')",
        n_neighbors=4,
        weights="distance",
        notes=DISTANCE_BUG,
    )


@model
def skl_knn_regressor_euclidean():
    x = data(2, 40)
    est = KNeighborsRegressor(3).fit(x, x[:, 1] - x[:, 2])
    return export(
        "skl_knn_regressor_euclidean",
        est,
        x,
        lambda q: {"variable": est.predict(q)},
        exercises="KNeighborsRegressor(3): Scan of distances, TopK, ArrayFeatureExtractor, mean",
    )


@model
def skl_knn_regressor_multi_target_distance():
    x = data(3, 40)
    est = KNeighborsRegressor(4, weights="distance", metric="manhattan").fit(x, x[:, :2] * 2)
    return export(
        "skl_knn_regressor_multi_target_distance",
        est,
        x,
        lambda q: {"variable": est.predict(q)},
        exercises="KNeighborsRegressor(4, weights='distance', manhattan), two targets",
        notes=DISTANCE_BUG,
    )


@model
def skl_nearest_neighbors_kneighbors():
    x = data(4, 30)
    est = NearestNeighbors(n_neighbors=3, radius=None).fit(x)

    def predict(q):
        dist, idx = est.kneighbors(q)
        return {"index": idx, "distance": dist}

    return export(
        "skl_nearest_neighbors_kneighbors",
        est,
        x,
        predict,
        exercises="NearestNeighbors(3).kneighbors: indices (int64) and distances",
    )


@model
def skl_radius_neighbors_regressor():
    x = data(5, 40)
    est = RadiusNeighborsRegressor(radius=6.0).fit(x, x[:, 0])
    return export(
        "skl_radius_neighbors_regressor",
        est,
        x,
        lambda q: {"variable": est.predict(q)},
        exercises="RadiusNeighborsRegressor(6.0): Scan of distances, mask of neighbours in radius",
        notes="with a radius that leaves a query without neighbours (2.5), onnxruntime fails in "
        "ArrayFeatureExtractor (index -1); 6.0 covers every query of the two sets",
    )


@model
def skl_local_outlier_factor_novelty():
    x = data(6, 40)
    est = LocalOutlierFactor(n_neighbors=5, novelty=True).fit(x)
    return export(
        "skl_local_outlier_factor_novelty",
        est,
        x,
        lambda q: {"label": est.predict(q), "scores": est.decision_function(q)},
        exercises="LocalOutlierFactor(novelty=True): Scan of distances, k-distance gathers, label "
        "and decision_function scores",
    )


def _gpr(name, dtype, exercises, kernel=None, notes=None):
    x = data(7, 25, 3, np.float64)
    y = np.sin(x[:, 0]) + 0.5 * x[:, 1]
    est = GaussianProcessRegressor(kernel=kernel, alpha=1e-3, random_state=0).fit(x, y)

    def predict(q):
        mean, std = est.predict(q.astype(np.float64), return_std=True)
        return {"GPmean": mean, "GPcovstd": std}

    return export(
        name,
        est,
        x,
        predict,
        exercises=exercises,
        dtype=dtype,
        notes=notes,
        options={GaussianProcessRegressor: {"return_std": True}},
    )


@model
def skl_gaussian_process_f64():
    return _gpr(
        "skl_gaussian_process_f64",
        np.float64,
        "GaussianProcessRegressor (default RBF) in float64, mean and std: Scan of kernel rows",
    )


@model
def skl_gaussian_process_f32():
    return _gpr(
        "skl_gaussian_process_f32",
        np.float32,
        "GaussianProcessRegressor (Constant*RBF + White) exported in float32, mean and std",
        kernel=ConstantKernel(1.0) * RBF(1.0) + WhiteKernel(1e-2),
        notes="the std in float32 cancels (k(x,x) - v.v): onnxruntime is ~2e-2 from sklearn's "
        "std; compare GPcovstd loosely",
    )


@model
def skl_gaussian_process_dot_product():
    return _gpr(
        "skl_gaussian_process_dot_product",
        np.float64,
        "GaussianProcessRegressor(DotProduct + White) in float64",
        kernel=DotProduct() + WhiteKernel(),
    )


@model
def skl_kernel_pca_rbf():
    x = data(8, 30)
    est = KernelPCA(3, kernel="rbf", gamma=0.3).fit(x)
    return export(
        "skl_kernel_pca_rbf",
        est,
        x,
        lambda q: {"variable": est.transform(q)},
        exercises="KernelPCA(rbf).transform: Scan of kernel rows then a projection",
        notes="signs of kernel PCA components are sklearn's; the model holds the same ones",
    )


@model
def skl_knn_imputer():
    x = data(9, 30)
    est = KNNImputer(n_neighbors=2).fit(x)

    def queries(seed, n):
        q = data(seed, n)
        q[np.random.default_rng(seed).random(q.shape) < 0.25] = np.nan
        return q

    proto = to_onnx(est, x[:1], target_opset=18)
    sets = [{"X": queries(91, 7)}, {"X": queries(92, 3)}]
    results = [{"variable": est.transform(s["X"]).astype(np.float32)} for s in sets]
    exercises = "KNNImputer: nan-euclidean distances in local ONNX functions (If, no loop)"
    return model.save("skl_knn_imputer", proto, sets, results, exercises)


if __name__ == "__main__":
    model.main()
