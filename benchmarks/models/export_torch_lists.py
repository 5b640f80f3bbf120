"""Export TorchScript loops that append to a Python list into ONNX (opset 17, TorchScript
exporter), the models `tests/frontends/onnx/rewrites/sequences/test_sequence_appends.py` checks take
the fast path.

Run with a Python that has torch (not a dependency of ov-loops or its tests):

    python benchmarks/models/export_torch_lists.py [OUT_DIR]

Writes torch_rnn_stack.onnx, torch_rnn_cat_dim1.onnx, torch_nested_lists.onnx and
torch_list_through_inner_loop.onnx (default: this file's directory).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

H = 8


class RnnStack(torch.nn.Module):
    """h = tanh(W h + x_t) for each step; the hidden states stacked: [T, B, H]."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = torch.nn.Linear(H, H)

    def forward(self, xs: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outs: list[torch.Tensor] = []
        for t in range(xs.shape[0]):
            h = torch.tanh(self.cell(h) + xs[t])
            outs.append(h)
        return torch.stack(outs), h


class RnnCatDim1(RnnStack):
    """The same cell; the hidden states concatenated on dim 1: [B, T * H]."""

    def forward(self, xs: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outs: list[torch.Tensor] = []
        for t in range(xs.shape[0]):
            h = torch.tanh(self.cell(h) + xs[t])
            outs.append(h * 2.0)
        return torch.cat(outs, dim=1), h


class NestedLists(RnnStack):
    """For each step, K sub-steps whose states are stacked on dim 1, then all steps stacked:
    [T, B, K, H]."""

    def forward(self, xs: torch.Tensor, h: torch.Tensor, k: int) -> torch.Tensor:
        steps: list[torch.Tensor] = []
        for t in range(xs.shape[0]):
            inner: list[torch.Tensor] = []
            for _ in range(k):
                h = torch.tanh(self.cell(h) + xs[t])
                inner.append(h)
            steps.append(torch.stack(inner, dim=1))
        return torch.stack(steps)


class ListThroughInnerLoop(RnnStack):
    """One list appended in the inner loop of two: [T * K, B, H]."""

    def forward(self, xs: torch.Tensor, h: torch.Tensor, k: int) -> torch.Tensor:
        outs: list[torch.Tensor] = []
        for t in range(xs.shape[0]):
            for _ in range(k):
                h = torch.tanh(self.cell(h) + xs[t])
                outs.append(h)
        return torch.stack(outs)


def export(module: torch.nn.Module, args: tuple, names: list[str], path: Path) -> None:
    torch.manual_seed(0)
    scripted = torch.jit.script(module)
    dynamic = {"xs": {0: "T", 1: "B"}, "h": {0: "B"}}
    torch.onnx.export(
        scripted,
        args,
        str(path),
        input_names=names,
        dynamic_axes=dynamic,
        opset_version=17,
        dynamo=False,
    )
    print(f"wrote {path} ({path.stat().st_size} bytes)")


def main(out_dir: Path) -> None:
    xs, h = torch.randn(5, 2, H), torch.randn(2, H)
    torch.manual_seed(0)
    export(RnnStack(), (xs, h), ["xs", "h"], out_dir / "torch_rnn_stack.onnx")
    torch.manual_seed(0)
    export(RnnCatDim1(), (xs, h), ["xs", "h"], out_dir / "torch_rnn_cat_dim1.onnx")
    torch.manual_seed(0)
    export(NestedLists(), (xs, h, 3), ["xs", "h", "k"], out_dir / "torch_nested_lists.onnx")
    torch.manual_seed(0)
    inner = out_dir / "torch_list_through_inner_loop.onnx"
    export(ListThroughInnerLoop(), (xs, h, 3), ["xs", "h", "k"], inner)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
