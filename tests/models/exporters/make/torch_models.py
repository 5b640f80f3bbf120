"""PyTorch models exported by torch.onnx (run in /work/exporters/torch-venv; see README.md).

Two exporters: TorchScript (`torch.jit.script` + `torch.onnx.export(..., dynamo=False)`, with
`dynamic_axes`): Python loops over tensors become ONNX Loops, lists become Sequences; and the
dynamo exporter (`dynamo=True`, with `dynamic_shapes`) of torch's control-flow operators
(`torch._higher_order_ops.scan`, `while_loop`, `torch.cond`). Expected outputs are the eager
module's.
"""

from __future__ import annotations

import io
import sys
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import Tensor, nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_io import Registry, rand  # noqa: E402

warnings.filterwarnings("ignore")
SCRIPT = "make/torch_models.py"
FRAMEWORK = f"torch {torch.__version__}"
OPSET = 17
TORCHSCRIPT = f"torch.onnx TorchScript (dynamo=False) {torch.__version__}"
DYNAMO = f"torch.onnx dynamo {torch.__version__}, onnxscript {version('onnxscript')}"
model = Registry(SCRIPT, TORCHSCRIPT, FRAMEWORK)


def _eager(module, sets, in_names, out_names):
    results = []
    with torch.no_grad():
        for inputs in sets:
            outs = module(*[torch.from_numpy(np.asarray(inputs[k])) for k in in_names])
            outs = [outs] if isinstance(outs, Tensor) else list(outs)
            assert len(outs) == len(out_names)
            results.append({k: v.numpy() for k, v in zip(out_names, outs)})
    return results


def export_script(
    name,
    module,
    sets,
    in_names,
    out_names,
    dynamic_axes,
    *,
    exercises,
    time_axis=None,
    rnn_like=False,
    notes=None,
    opset=OPSET,
):
    """TorchScript export: torch.jit.script(module), dynamo=False, dynamic_axes."""
    torch.manual_seed(0)
    module.eval()
    scripted = torch.jit.script(module)
    args = tuple(torch.from_numpy(np.asarray(sets[0][k])) for k in in_names)
    buffer = io.BytesIO()
    torch.onnx.export(
        scripted,
        args,
        buffer,
        input_names=in_names,
        output_names=out_names,
        dynamic_axes=dynamic_axes,
        opset_version=opset,
        dynamo=False,
    )
    proto = onnx.load_from_string(buffer.getvalue())
    results = _eager(module, sets, in_names, out_names)
    about = {"time_axis": time_axis, "rnn_like": rnn_like, "notes": notes}
    return model.save(name, proto, sets, results, exercises, **about)


def export_dynamo(
    name,
    module,
    sets,
    in_names,
    out_names,
    dynamic_shapes,
    *,
    exercises,
    time_axis=None,
    rnn_like=False,
    notes=None,
):
    """dynamo export: torch.onnx.export(..., dynamo=True, dynamic_shapes=...)."""
    module.eval()
    args = tuple(torch.from_numpy(np.asarray(sets[0][k])) for k in in_names)
    program = torch.onnx.export(
        module,
        args,
        input_names=in_names,
        output_names=out_names,
        dynamic_shapes=dynamic_shapes,
        dynamo=True,
        verbose=False,
    )
    proto = program.model_proto
    results = _eager(module, sets, in_names, out_names)
    about = {"time_axis": time_axis, "rnn_like": rnn_like, "notes": notes}
    return model.save(name, proto, sets, results, exercises, exporter=DYNAMO, **about)


BT = {0: "B", 1: "T"}


# ---------------------------------------------------------------- TorchScript loops


class ElmanLoop(nn.Module):
    """A hand-written Elman RNN cell applied over time, outputs appended to a list then stacked."""

    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(4, 8)
        self.hh = nn.Linear(8, 8, bias=False)

    def forward(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        outs: list[Tensor] = []
        for t in range(x.size(1)):
            h = torch.tanh(self.ih(x[:, t]) + self.hh(h))
            outs.append(h)
        return torch.stack(outs, 1), h


@model
def torch_ts_elman_stack():
    torch.manual_seed(1)
    sets = [
        {"x": rand(1, 2, 5, 4), "h0": rand(2, 2, 8)},
        {"x": rand(3, 3, 9, 4), "h0": rand(4, 3, 8)},
    ]
    return export_script(
        "torch_ts_elman_stack",
        ElmanLoop(),
        sets,
        ["x", "h0"],
        ["y", "h"],
        {"x": BT, "h0": {0: "B"}, "y": BT, "h": {0: "B"}},
        exercises="TorchScript: custom RNN cell looped over x.size(1), outputs appended "
        "to a list and torch.stack-ed (SequenceInsert + ConcatFromSequence new_axis)",
        time_axis={"x": 1},
        rnn_like=True,
    )


class GRUCellCat(nn.Module):
    """A GRU cell (4 -> 6) over time, unsqueezed outputs collected in a list and torch.cat-ed."""

    def __init__(self, cell: nn.Module):
        super().__init__()
        self.cell = cell

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        h = torch.zeros(x.size(0), 6)
        outs: list[Tensor] = []
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
            outs.append(h.unsqueeze(1))
        return torch.cat(outs, 1), h


def _gru_cat(name, make_cell, seed, exercises):
    torch.manual_seed(2)
    sets = [{"x": rand(seed, 2, 5, 4)}, {"x": rand(seed + 1, 4, 3, 4)}]
    exercises += " over time from a zero state sized by x.size(0), unsqueezed steps torch.cat-ed"
    dims = {"x": BT, "y": BT, "h": {0: "B"}}
    module = GRUCellCat(make_cell())
    return export_script(
        name,
        module,
        sets,
        ["x"],
        ["y", "h"],
        dims,
        exercises=exercises,
        time_axis={"x": 1},
        rnn_like=True,
    )


@model
def torch_ts_grucell_cat():
    return _gru_cat("torch_ts_grucell_cat", lambda: nn.GRUCell(4, 6), 10, "TorchScript: nn.GRUCell")


class LSTMCellLoop(nn.Module):
    """nn.LSTMCell over time with (h, c) given, returning the last states and the mean output."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 6)

    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        total = torch.zeros_like(h)
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            total = total + h
        return total / x.size(0), h, c


@model
def torch_ts_lstmcell_time_major():
    torch.manual_seed(3)
    sets = [
        {"x": rand(20, 5, 2, 4), "h0": rand(21, 2, 6), "c0": rand(22, 2, 6)},
        {"x": rand(23, 8, 3, 4), "h0": rand(24, 3, 6), "c0": rand(25, 3, 6)},
    ]
    return export_script(
        "torch_ts_lstmcell_time_major",
        LSTMCellLoop(),
        sets,
        ["x", "h0", "c0"],
        ["mean", "h", "c"],
        {"x": {0: "T", 1: "B"}, "h0": {0: "B"}, "c0": {0: "B"}},
        exercises="TorchScript: nn.LSTMCell over time-major x with (h0, c0) inputs, a "
        "running sum carried, mean divided by the trip count",
        rnn_like=True,
        notes="mean over time: chunked outputs are not the whole's",
    )


class WhileBreak(nn.Module):
    """A while loop with a break that appends to a list (ConcatFromSequence after the loop)."""

    def forward(self, x: Tensor, limit: Tensor) -> tuple[Tensor, Tensor]:
        outs: list[Tensor] = []
        i = 0
        v = x
        while i < 100:
            v = v * 1.5 + 0.1
            outs.append(v.sum(1))
            if bool(v.abs().max() > limit):
                break
            i += 1
        return torch.stack(outs, 0), v


@model
def torch_ts_while_break_append():
    sets = [
        {"x": rand(30, 2, 3, scale=0.1), "limit": np.array(5.0, np.float32)},
        {"x": rand(31, 4, 3, scale=0.1), "limit": np.array(50.0, np.float32)},
    ]
    return export_script(
        "torch_ts_while_break_append",
        WhileBreak(),
        sets,
        ["x", "limit"],
        ["sums", "v"],
        {"x": {0: "B"}, "sums": {0: "N", 1: "B"}},
        exercises="TorchScript: while loop with a data-dependent break, appending to a "
        "list (Loop with a Sequence carried, ConcatFromSequence after)",
    )


class GreedyTopk(nn.Module):
    """Greedy decoding with topk: the token history grows by one column per step (shape changes)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.rnn = nn.LSTMCell(6, 6)
        self.out = nn.Linear(6, 10)

    def forward(self, start: Tensor, steps: Tensor) -> tuple[Tensor, Tensor]:
        tokens = start.unsqueeze(1)
        h = torch.zeros(start.size(0), 6)
        c = torch.zeros(start.size(0), 6)
        score = torch.zeros(start.size(0))
        for _ in range(int(steps)):
            h, c = self.rnn(self.emb(tokens[:, -1]), (h, c))
            logp = torch.log_softmax(self.out(h), -1)
            best, idx = logp.topk(1, -1)
            score = score + best.squeeze(1)
            tokens = torch.cat([tokens, idx], 1)
        return tokens, score


@model
def torch_ts_greedy_topk_growing():
    torch.manual_seed(4)
    sets = [
        {"start": np.array([1, 2, 3], np.int64), "steps": np.array(5, np.int64)},
        {"start": np.array([7, 0], np.int64), "steps": np.array(2, np.int64)},
    ]
    return export_script(
        "torch_ts_greedy_topk_growing",
        GreedyTopk(),
        sets,
        ["start", "steps"],
        ["tokens", "score"],
        {"start": {0: "B"}, "tokens": {0: "B", 1: "L"}, "score": {0: "B"}},
        exercises="TorchScript: greedy decode (Embedding, LSTMCell) with topk(1); the carried "
        "token tensor grows by a column each step (carried shape changes), steps a graph input",
    )


class BeamSearch(nn.Module):
    """A small beam search: carried beams [K, L] grow, scores re-ranked with topk over K*V."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(8, 5)
        self.proj = nn.Linear(5, 8)

    def forward(self, start: Tensor, steps: Tensor) -> tuple[Tensor, Tensor]:
        k = 3
        beams = start.view(1, 1).repeat(k, 1)
        scores = torch.tensor([0.0, -1e4, -1e4])
        for _ in range(int(steps)):
            logp = torch.log_softmax(self.proj(torch.tanh(self.emb(beams).mean(1))), -1)
            total = (scores.unsqueeze(1) + logp).view(-1)
            best, idx = total.topk(k)
            origin = torch.div(idx, 8, rounding_mode="floor")
            token = idx % 8
            beams = torch.cat([beams[origin], token.unsqueeze(1)], 1)
            scores = best
        return beams, scores


@model
def torch_ts_beam_search_topk():
    torch.manual_seed(5)
    sets = [
        {"start": np.array(2, np.int64), "steps": np.array(4, np.int64)},
        {"start": np.array(5, np.int64), "steps": np.array(1, np.int64)},
    ]
    return export_script(
        "torch_ts_beam_search_topk",
        BeamSearch(),
        sets,
        ["start", "steps"],
        ["beams", "scores"],
        {"beams": {1: "L"}},
        exercises="TorchScript: beam search (k=3) with topk over beams x vocab, beams "
        "gathered by origin and grown by a column per step",
    )


class KVCache(nn.Module):
    """A KV cache kept in a list that starts empty; the loop count is an input."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)
        self.v = nn.Linear(4, 4)

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        keys: list[Tensor] = []
        values: list[Tensor] = []
        h = x
        for _ in range(int(n)):
            keys.append(self.k(h))
            values.append(self.v(h))
            kk = torch.stack(keys, 1)
            vv = torch.stack(values, 1)
            att = torch.softmax((self.q(h).unsqueeze(1) * kk).sum(-1), -1)
            h = torch.tanh((att.unsqueeze(-1) * vv).sum(1) + h)
        return h, torch.stack(keys, 1)


@model
def torch_ts_kv_cache_list():
    torch.manual_seed(6)
    sets = [
        {"x": rand(40, 2, 4), "n": np.array(4, np.int64)},
        {"x": rand(41, 3, 4), "n": np.array(2, np.int64)},
    ]
    return export_script(
        "torch_ts_kv_cache_list",
        KVCache(),
        sets,
        ["x", "n"],
        ["h", "keys"],
        {"x": {0: "B"}, "h": {0: "B"}, "keys": {0: "B", 1: "N"}},
        exercises="TorchScript: KV cache lists started empty, appended and stacked every "
        "step (Sequences carried and read inside the Loop), loop count n an input",
    )


class NestedRuntime(nn.Module):
    """Nested loops: the outer over rows, the inner a run-time count per row; dynamic batch."""

    def forward(self, x: Tensor, counts: Tensor) -> Tensor:
        out = torch.zeros_like(x[:, 0])
        for i in range(counts.size(0)):
            acc = x[:, i]
            for _ in range(int(counts[i])):
                acc = torch.sin(acc) * 1.1 + 0.05
            out = out + acc
        return out


@model
def torch_ts_nested_runtime_inner():
    sets = [
        {"x": rand(50, 2, 3, 4), "counts": np.array([2, 0, 3], np.int64)},
        {"x": rand(51, 5, 2, 4), "counts": np.array([1, 4], np.int64)},
    ]
    return export_script(
        "torch_ts_nested_runtime_inner",
        NestedRuntime(),
        sets,
        ["x", "counts"],
        ["out"],
        {"x": {0: "B", 1: "R"}, "counts": {0: "R"}, "out": {0: "B"}},
        exercises="TorchScript: nested loops, the inner count read from an input per "
        "outer iteration (0 for one), dynamic batch B and rows R",
    )


class Converge(nn.Module):
    """Fixed-point iteration until the update is small (while on a tensor condition)."""

    def forward(self, a: Tensor) -> tuple[Tensor, Tensor]:
        x = torch.zeros_like(a)
        k = torch.zeros((), dtype=torch.long)
        delta = torch.ones(())
        while bool(delta > 1e-5) and int(k) < 200:
            new = torch.cos(x) * 0.5 + a
            delta = (new - x).abs().max()
            x = new
            k = k + 1
        return x, k


@model
def torch_ts_while_converge():
    sets = [{"a": rand(60, 6, scale=0.5)}, {"a": rand(61, 9)}]
    return export_script(
        "torch_ts_while_converge",
        Converge(),
        sets,
        ["a"],
        ["x", "k"],
        {"a": {0: "N"}},
        exercises="TorchScript: while loop to convergence (tensor condition and an "
        "iteration cap), counter output",
    )


class IfInLoop(nn.Module):
    """A loop over time whose body branches on the data (If inside Loop)."""

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros_like(x[0])
        for t in range(x.size(0)):
            h = h + x[t] if bool(x[t].sum() > 0) else h * 0.5
        return h


@model
def torch_ts_if_in_loop():
    sets = [{"x": rand(70, 6, 3)}, {"x": rand(71, 10, 3)}]
    return export_script(
        "torch_ts_if_in_loop",
        IfInLoop(),
        sets,
        ["x"],
        ["h"],
        {"x": {0: "T"}},
        exercises="TorchScript: data-dependent if inside a loop over time (If in the Loop body)",
        time_axis={"x": 0},
        rnn_like=True,
    )


class WeightsAsInputs(nn.Module):
    """An RNN whose weights are inputs of the model (passed into the Loop)."""

    def forward(self, x: Tensor, h: Tensor, w: Tensor, u: Tensor) -> Tensor:
        for t in range(x.size(1)):
            h = torch.tanh(x[:, t] @ w + h @ u)
        return h


@model
def torch_ts_weights_as_inputs():
    w, u = rand(80, 4, 6, scale=0.5), rand(81, 6, 6, scale=0.4)
    sets = [
        {"x": rand(82, 2, 5, 4), "h0": rand(83, 2, 6), "w": w, "u": u},
        {"x": rand(84, 3, 7, 4), "h0": rand(85, 3, 6), "w": w, "u": u},
    ]
    return export_script(
        "torch_ts_weights_as_inputs",
        WeightsAsInputs(),
        sets,
        ["x", "h0", "w", "u"],
        ["h"],
        {"x": BT, "h0": {0: "B"}, "h": {0: "B"}},
        exercises="TorchScript: RNN loop whose weight matrices are graph inputs",
        time_axis={"x": 1},
        rnn_like=True,
    )


class CountInput(nn.Module):
    """`for i in range(n)` with n a tensor input; the counter enters the body's arithmetic."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for i in range(int(n)):
            x = x * 0.9 + float(i) * 0.1
        return x


@model
def torch_ts_count_input():
    sets = [
        {"x": rand(90, 2, 3), "n": np.array(6, np.int64)},
        {"x": rand(91, 4, 3), "n": np.array(0, np.int64)},
    ]
    return export_script(
        "torch_ts_count_input",
        CountInput(),
        sets,
        ["x", "n"],
        ["y"],
        {"x": {0: "B"}, "y": {0: "B"}},
        exercises="TorchScript: range(int(n)) with n an input (0 in set 2), counter used",
    )


class SplitUnbind(nn.Module):
    """A loop over `x.unbind(1)` (a list of time steps), outputs torch.stack-ed."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4 + 5, 5)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(0), 5)
        outs: list[Tensor] = []
        for xt in x.unbind(1):
            h = torch.relu(self.lin(torch.cat([xt, h], 1)))
            outs.append(h)
        return torch.stack(outs, 1)


class CatStateLoop(SplitUnbind):
    """SplitUnbind with x[:, t] instead of unbind (the unbind loop fails to export)."""

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(0), 5)
        outs: list[Tensor] = []
        for t in range(x.size(1)):
            h = torch.relu(self.lin(torch.cat([x[:, t], h], 1)))
            outs.append(h)
        return torch.stack(outs, 1)


def _relu_cell_loop(name, module_class, seed, exercises):
    torch.manual_seed(7)
    module = module_class()
    sets = [{"x": rand(seed, 2, 5, 4)}, {"x": rand(seed + 1, 3, 8, 4)}]
    exercises += ", concat of input step and state, relu cell, stacked outputs"
    dims = {"x": BT, "y": BT}
    return export_script(
        name,
        module,
        sets,
        ["x"],
        ["y"],
        dims,
        exercises=exercises,
        time_axis={"x": 1},
        rnn_like=True,
    )


@model
def torch_ts_unbind_loop():
    return _relu_cell_loop(
        "torch_ts_unbind_loop",
        SplitUnbind,
        100,
        "TorchScript: for xt in x.unbind(1) (SplitToSequence looped over)",
    )


@model
def torch_ts_concat_state_loop():
    return _relu_cell_loop(
        "torch_ts_concat_state_loop",
        CatStateLoop,
        102,
        "TorchScript: for t in range(x.size(1)) reading x[:, t]",
    )


class HandGRUCell(nn.Module):
    """A GRU cell written out (nn.GRUCell fails TorchScript export, see torch_ts_grucell_cat)."""

    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.ih = nn.Linear(features, 3 * hidden)
        self.hh = nn.Linear(hidden, 3 * hidden)

    def forward(self, x: Tensor, h: Tensor) -> Tensor:
        gi = self.ih(x)
        gh = self.hh(h)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h


@model
def torch_ts_gru_by_hand_cat():
    return _gru_cat(
        "torch_ts_gru_by_hand_cat",
        lambda: HandGRUCell(4, 6),
        12,
        "TorchScript: a GRU cell written out (chunk into 3 gates)",
    )


class TwoLayerScripted(nn.Module):
    """Two stacked GRU cells (written out) in one loop."""

    def __init__(self):
        super().__init__()
        self.l1 = HandGRUCell(4, 6)
        self.l2 = HandGRUCell(6, 5)

    def forward(self, x: Tensor) -> Tensor:
        h1 = torch.zeros(x.size(0), 6)
        h2 = torch.zeros(x.size(0), 5)
        outs: list[Tensor] = []
        for t in range(x.size(1)):
            h1 = self.l1(x[:, t], h1)
            h2 = self.l2(h1, h2)
            outs.append(h2)
        return torch.stack(outs, 1)


@model
def torch_ts_two_layer_gru_by_hand():
    torch.manual_seed(8)
    sets = [{"x": rand(110, 2, 6, 4)}, {"x": rand(111, 1, 3, 4)}]
    return export_script(
        "torch_ts_two_layer_gru_by_hand",
        TwoLayerScripted(),
        sets,
        ["x"],
        ["y"],
        {"x": BT, "y": BT},
        exercises="TorchScript: two GRU cells per step in one loop (stacked RNN by hand), opset 13",
        time_axis={"x": 1},
        rnn_like=True,
        opset=13,
    )


# ---------------------------------------------------------------- dynamo: higher-order control flow


class ScanRNN(nn.Module):
    """torch._higher_order_ops.scan over time with an RNN step."""

    def __init__(self):
        super().__init__()
        self.w = nn.Linear(4, 8)
        self.u = nn.Linear(8, 8)

    def forward(self, x: Tensor, h0: Tensor) -> tuple[Tensor, Tensor]:
        from torch._higher_order_ops.scan import scan

        def step(h, xt):
            h = torch.tanh(self.w(xt) + self.u(h))
            return h, h.clone()

        h, ys = scan(step, h0, x.transpose(0, 1))
        return ys.transpose(0, 1), h


def _dims(*names):
    return [torch.export.Dim(n) for n in names]


@model
def torch_dynamo_scan_rnn():
    torch.manual_seed(9)
    b, t = _dims("B", "T")
    sets = [
        {"x": rand(120, 2, 5, 4), "h0": rand(121, 2, 8)},
        {"x": rand(122, 3, 9, 4), "h0": rand(123, 3, 8)},
    ]
    return export_dynamo(
        "torch_dynamo_scan_rnn",
        ScanRNN(),
        sets,
        ["x", "h0"],
        ["y", "h"],
        ({0: b, 1: t}, {0: b}),
        exercises="dynamo: torch._higher_order_ops.scan RNN step over transposed x "
        "(ONNX Scan), dynamic B and T",
        time_axis={"x": 1},
        rnn_like=True,
    )


class ScanTwoCarries(nn.Module):
    """scan with two carries and two stacked outputs (cumulative sum and product)."""

    def forward(self, xs: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        from torch._higher_order_ops.scan import scan

        def step(carry, x):
            s, p = carry
            s = s + x
            p = p * torch.sigmoid(x)
            return (s, p), (s.clone(), p.clone())

        (s, p), (ss, ps) = scan(step, (torch.zeros_like(xs[0]), torch.ones_like(xs[0])), xs)
        return s, p, ss, ps


@model
def torch_dynamo_scan_two_carries():
    (t,) = _dims("T")
    sets = [{"xs": rand(130, 5, 3)}, {"xs": rand(131, 8, 3)}]
    return export_dynamo(
        "torch_dynamo_scan_two_carries",
        ScanTwoCarries(),
        sets,
        ["xs"],
        ["s", "p", "ss", "ps"],
        ({0: t},),
        exercises="dynamo: scan with a tuple carry and two stacked outputs, time T dynamic",
        time_axis={"xs": 0},
        rnn_like=True,
    )


class WhileCount(nn.Module):
    """torch._higher_order_ops.while_loop counting to an input n."""

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        from torch._higher_order_ops.while_loop import while_loop

        def cond(i, v):
            return i < n

        def body(i, v):
            return i + 1, v * 0.9 + 1.0

        return while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))


@model
def torch_dynamo_while_count():
    (b,) = _dims("B")
    sets = [
        {"x": rand(140, 2, 4), "n": np.array(5, np.int64)},
        {"x": rand(141, 5, 4), "n": np.array(0, np.int64)},
    ]
    return export_dynamo(
        "torch_dynamo_while_count",
        WhileCount(),
        sets,
        ["x", "n"],
        ["i", "y"],
        ({0: b}, None),
        exercises="dynamo: torch._higher_order_ops.while_loop with the count an input (0 "
        "in set 2), dynamic batch",
    )


class WhileConverge(nn.Module):
    """while_loop on a data-dependent condition with a parameter used in the body."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        from torch._higher_order_ops.while_loop import while_loop

        def cond(k, v):
            return (v.abs().sum() < 100.0) & (k < 30)

        def body(k, v):
            return k + 1, self.lin(v) * 1.5 + 0.1

        return while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))


@model
def torch_dynamo_while_converge():
    torch.manual_seed(10)
    (b,) = _dims("B")
    sets = [{"x": rand(150, 2, 4)}, {"x": rand(151, 4, 4)}]
    return export_dynamo(
        "torch_dynamo_while_converge",
        WhileConverge(),
        sets,
        ["x"],
        ["k", "y"],
        ({0: b},),
        exercises="dynamo: while_loop with a data-dependent condition and an nn.Linear "
        "(weights lifted into the body)",
    )


class CondBranch(nn.Module):
    """torch.cond choosing between two small networks."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.b = nn.Linear(4, 3)

    def forward(self, x: Tensor) -> Tensor:
        return torch.cond(
            x.sum() > 0, lambda v: torch.relu(self.a(v)), lambda v: torch.tanh(self.b(v)), (x,)
        )


@model
def torch_dynamo_cond():
    torch.manual_seed(11)
    (b,) = _dims("B")
    sets = [{"x": np.abs(rand(160, 2, 4))}, {"x": -np.abs(rand(161, 5, 4))}]
    return export_dynamo(
        "torch_dynamo_cond",
        CondBranch(),
        sets,
        ["x"],
        ["y"],
        ({0: b},),
        exercises="dynamo: torch.cond between two Linear branches (If, no loop); both "
        "branches taken across the two sets",
    )


class ScanInWhile(nn.Module):
    """A scan nested in a while_loop body."""

    def forward(self, xs: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        from torch._higher_order_ops.scan import scan
        from torch._higher_order_ops.while_loop import while_loop

        def cond(i, acc):
            return i < n

        def body(i, acc):
            def step(c, x):
                c = c * 0.5 + x + acc
                return c, c.clone()

            last, _ = scan(step, torch.zeros_like(xs[0]), xs)
            return i + 1, torch.tanh(last)

        return while_loop(cond, body, (torch.zeros((), dtype=torch.int64), torch.zeros_like(xs[0])))


@model
def torch_dynamo_scan_in_while():
    (t,) = _dims("T")
    sets = [
        {"xs": rand(170, 4, 3), "n": np.array(3, np.int64)},
        {"xs": rand(171, 7, 3), "n": np.array(1, np.int64)},
    ]
    return export_dynamo(
        "torch_dynamo_scan_in_while",
        ScanInWhile(),
        sets,
        ["xs", "n"],
        ["i", "acc"],
        ({0: t}, None),
        exercises="dynamo: a scan nested in a while_loop body (Scan in Loop)",
    )


class GRUModule(nn.Module):
    """nn.GRU (batch_first) followed by a Linear head: the exporter's RNN op, no loop."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 8, batch_first=True)
        self.head = nn.Linear(8, 2)

    def forward(self, x: Tensor) -> Tensor:
        y, _ = self.gru(x)
        return self.head(y)


@model
def torch_dynamo_nn_gru_op():
    torch.manual_seed(12)
    b, t = _dims("B", "T")
    sets = [{"x": rand(180, 2, 5, 4)}, {"x": rand(181, 3, 7, 4)}]
    return export_dynamo(
        "torch_dynamo_nn_gru_op",
        GRUModule(),
        sets,
        ["x"],
        ["y"],
        ({0: b, 1: t},),
        exercises="dynamo: nn.GRU + Linear; the exporter emits an ONNX GRU op (a control: no Loop)",
        time_axis={"x": 1},
        rnn_like=False,
    )


if __name__ == "__main__":
    model.main()
