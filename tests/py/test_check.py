"""cortexm.check and `python -m cortexm.aot --check`: every problem at once, with module paths, and
the float fallback ops with their reasons."""

import textwrap

import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn

from cortexm._export.handlers import suggestion  # noqa: E402


class UnevenPool(nn.Module):
    """A conv, then an adaptive average pool whose windows do not divide the input (6 -> 4): the
    int8 lowering takes adaptive pools only as average pools, so this one runs as float fallback."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)

    def forward(self, x):
        return nn.functional.adaptive_avg_pool2d(self.conv(x), 4)


class Head(nn.Module):
    def forward(self, x):
        return torch.flip(torch.cumsum(x, -1), [-1]) * torch.erfinv(x * 0.1)


def unsupported():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 8), Head()).eval()


def test_check_lists_every_export_problem_with_its_module_path():
    report = cortexm.check(unsupported(), (torch.randn(2, 8),))
    assert not report.ok and report.stages == ["export"]
    assert [str(p) for p in report.problems] == [f"1: {op} is not supported at export: {suggestion(op)}"
                                                 for op in ("aten.cumsum.default", "aten.flip.default",
                                                            "aten.erfinv.default")]
    assert all(p.stage == "export" for p in report.problems)
    assert str(report).splitlines()[0] == ("cortexm.check for cortex-m55+int8 (int8): 3 problems prevent deployment "
                                           "(stages run: export)")


def test_check_reports_float_fallback_and_why():
    torch.manual_seed(0)
    model = UnevenPool().eval()
    x = torch.randn(1, 2, 6, 6)
    report = cortexm.check(model, (x,), [(torch.randn(1, 2, 6, 6),) for _ in range(4)])
    assert report.ok and report.stages == ["export", "quantize", "lower", "program"]
    assert report.program.float_ops == len(report.float_fallback) >= 1
    pool = [f for f in report.float_fallback if f.op == "aten.adaptive_avg_pool2d.default"]
    assert pool and pool[0].why.startswith(("not quantized", "no int8 kernel")), report.float_fallback
    assert "runs as float fallback" in str(report)
    clean = cortexm.check(nn.Sequential(nn.Linear(8, 4), nn.ReLU()).eval(), (torch.randn(2, 8),))
    assert clean.ok and clean.float_fallback == [] and clean.program.float_ops == 0
    assert "float fallback: none" in str(clean)


def transposed_pair():
    torch.manual_seed(0)
    return nn.Sequential(nn.ConvTranspose2d(2, 2, 2, stride=2), nn.ReLU(), nn.ConvTranspose2d(2, 2, 2, stride=2)).eval()


def test_lower_lists_every_node_without_a_program_kernel_at_once():
    """16x8 has no transposed convolution kernel and the portable kernels none in float: lower
    fails once, listing both nodes with their module paths."""
    x = torch.randn(1, 2, 4, 4)
    qgraph = cortexm.quantize(cortexm.export(transposed_pair(), (x,)), [(x,)], progress=False, precision="16x8")
    with pytest.raises(cortexm.UnsupportedError) as info:
        cortexm.lower(qgraph)
    lines = str(info.value).splitlines()
    assert lines[0] == "cortexm.lower: 2 nodes no cortexm program can run:"
    assert [p["source"] for p in info.value.problems] == ["0", "2"]
    assert all("in module" in line and "transposed convolution" in line for line in lines[1:])
    report = cortexm.check(transposed_pair(), (x,), precision="16x8")
    assert not report.ok and report.stages == ["export", "quantize", "lower"]
    assert [(p.module, p.op) for p in report.problems] == [("0", "aten.convolution.default"),
                                                           ("2", "aten.convolution.default")]
    assert report.float_fallback == []  # left float, yet no float kernel: a problem, not a fallback
    assert cortexm.check(transposed_pair(), (x,)).ok  # int8 lowers them


MODEL_FILE = """
import torch
from torch import nn


class Head(nn.Module):
    def forward(self, x):
        return torch.flip(torch.cumsum(x, -1), [-1])


def unsupported():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 8), Head()), (torch.randn(2, 8),)


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 4), nn.ReLU()), (torch.randn(2, 8),)
"""


def aot(capsys, *args) -> tuple:
    """(exit status, stdout, stderr) of python -m cortexm.aot with args."""
    from cortexm.aot import main

    try:
        code = main(list(args))
    except SystemExit as e:  # argparse's errors
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_aot_check_prints_the_report_and_fails_when_the_model_cannot_deploy(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models.py").write_text(textwrap.dedent(MODEL_FILE))
    code, out, err = aot(capsys, "--model", "models.py:unsupported", "--check")
    assert code == 1, err
    assert ("1: aten.cumsum.default is not supported at export: multiply by a constant triangular matrix" in out
            and "\n  1: aten.flip.default is not supported at export: reverse by slices" in out)
    code, out, err = aot(capsys, "--model", "models.py:mlp", "--check", "--precision", "16x8")
    assert code == 0, err
    assert out.startswith("cortexm.check for cortex-m55+int8 (16x8): deploys:")
    assert not list(tmp_path.glob("*.cmpte"))
    code, out, err = aot(capsys, "--model", "models.py:mlp", "--check", "--output", "m.cmpte")
    assert code == 2 and "--check writes nothing: drop --output" in err
