"""Every committed real export (tests/models/exporters/, issue 22) through every feature:
convert at none/default/max (both input sets, f32 and f16 weights), static `--input` shapes at
default and max, `--stateful` fed in chunks where the manifest names a time axis (refused in
one line where an RNN-like model cannot stream: `CANNOT_STREAM`), `--target NPU` with static
shapes run on CPU, and output shapes against `openvino.convert_model`'s
(`tests/models/corpus.py`). What fails today is an xfail(strict=True) listed in
`corpus_known_failures.py`; what is rightly refused is asserted refused.

CI runs every model at `default`, and the other features on one share in `SHARES` of the
models (model i when i % SHARES is the ISO week number % SHARES: every pair runs within
SHARES weeks). `OV_LOOPS_CORPUS=full` runs every pair, `OV_LOOPS_CORPUS=K` share K.
"""

from __future__ import annotations

import datetime
import os

import pytest

from ov_loops.errors import ConversionError
from tests.models.corpus import FEATURES, applies, models
from tests.models.corpus_known_failures import KNOWN_FAILURES, REFUSED

SHARES = 4
ALWAYS = ("default",)


def _share() -> int | None:
    """The share of the models run beyond `ALWAYS` (None: all of them)."""
    chosen = os.environ.get("OV_LOOPS_CORPUS", "")
    if chosen == "full":
        return None
    if chosen.isdigit():
        return int(chosen) % SHARES
    return datetime.date.today().isocalendar().week % SHARES


def _params() -> list:
    share, params = _share(), []
    for index, model in enumerate(models()):
        for feature in FEATURES:
            chosen = share is None or feature in ALWAYS or index % SHARES == share
            if not (chosen and applies(model, feature)):
                continue
            key = (model.name, feature)
            marks = []
            if key in KNOWN_FAILURES:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[key]))
            params.append(pytest.param(model, feature, marks=marks, id=f"{model.name}-{feature}"))
    return params


@pytest.mark.parametrize(("model", "feature"), _params())
def test_exporter_corpus(model, feature, tmp_path):
    if (model.name, feature) in REFUSED:
        with pytest.raises(ConversionError) as refusal:
            FEATURES[feature](model, tmp_path)
        assert "\n" not in str(refusal.value), str(refusal.value)
        return
    FEATURES[feature](model, tmp_path)


def test_the_tables_name_corpus_pairs():
    """Every entry of the known-failure and refusal tables is a (model, feature) the corpus
    runs, and no pair is in both."""
    pairs = {(m.name, f) for m in models() for f in FEATURES if applies(m, f)}
    assert not (set(KNOWN_FAILURES) | set(REFUSED)) - pairs
    assert not set(KNOWN_FAILURES) & set(REFUSED)
    for table in (KNOWN_FAILURES, REFUSED):
        assert list(table) == sorted(table), "keep the tables sorted (one entry per line)"


def test_stateful_max_takes_a_chunk_of_no_step_between_stacked_layers(tmp_path):
    """Regression (every week, not only in its share): jax's stacked GRU -> LSTM at max, both
    loops *Sequence-5 ops keeping their states, fed chunks [n, 0, m]: the first layer's rows
    of no step have batch 0, the second layer's state batch B; the LSTMSequence refused to run
    ("Dimension `batch_size` is not matched between inputs")."""
    (model,) = [m for m in models() if m.name == "jax_linen_stacked_gru_lstm"]
    FEATURES["stateful-max"](model, tmp_path)
