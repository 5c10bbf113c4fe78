import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_terminal_summary(terminalreporter):
    """The per-model LSB table test_lower_reference records (user property lsb_vs_fake_quant):
    the lowered outputs' distance from the fake-quantized graph (max, mean) and the worst integer
    op's distance from its float op quantized."""
    rows = []
    for report in terminalreporter.stats.get("passed", []):
        if report.when != "call":
            continue
        rows += [value for key, value in report.user_properties if key == "lsb_vs_fake_quant"]
    if not rows:
        return
    terminalreporter.section("lowered vs fake-quantized float, in LSB of the output scale")
    terminalreporter.write_line(f"{'model':<24}{'inputs':>7}{'cortex_m ops':>14}{'max LSB':>10}"
                                f"{'mean LSB':>10}{'worst op LSB':>14}")
    for r in sorted(rows, key=lambda r: r["model"]):
        terminalreporter.write_line(f"{r['model']:<24}{r['inputs']:>7}{r['cortex_m_ops']:>14}"
                                    f"{r['max_lsb']:>10.3f}{r['mean_lsb']:>10.4f}"
                                    f"{r['op_max_lsb']:>14}")
