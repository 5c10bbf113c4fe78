"""Memory-plan plots: buffers named, inputs and outputs shown, long models in rows, the HTML page,
in-place depthwise buffers."""

import os
import re
import xml.etree.ElementTree as ET

import pytest

import cortexm
import zoo
from cortexm import memory_plan
from matplotlib.patches import Rectangle

SVG = "{http://www.w3.org/2000/svg}"


def chain(n):
    """x -> relu x n -> output: n + 1 steps with an output of 64 B and intermediates of 4 KB."""
    g = cortexm.Graph()
    x = g.add_input("x", [1, 1024])
    v = x
    for k in range(n):
        v = g.call("aten.relu.default", [v], name=f"relu_{k}")
    g.outputs = [g.call("aten.view_copy.default", [g.call("aten.slice_copy.Tensor", [v], {"dim": 1, "start": 0,
                                                                                       "end": 16})], {"size": [16]})]
    return g


def figure_of(plan):
    return memory_plan.timeline_figure(plan.boxes(), plan.arena_size, plan.step_names(), "t")


def svg_of(page):
    return ET.fromstring(re.search(r"<svg .*</svg>", page, re.S).group(0))


def test_buffers_are_named_and_a_tiny_output_is_visible():
    plan = cortexm.plan_memory(chain(3))
    output = next(b for b in plan.buffers if b.kind == "output")
    assert output.size * 100 < plan.arena_size  # under 1 % of the arena: invisible at its true height
    fig = figure_of(plan)
    [ax] = fig.axes
    texts = {t.get_text() for t in ax.texts}
    assert {"x", "relu_0", "relu_1", output.name} <= texts
    bottom = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() > 0 and p.get_y() == output.offset
              and p.get_x() == output.first]
    assert any(p.get_height() >= memory_plan.MIN_HEIGHT * plan.arena_size for p in bottom)
    assert any(p.get_linewidth() > 1 for p in bottom)  # outputs and inputs outlined thick
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[1] == "1 relu_1" and len(labels) == plan.num_steps


def test_a_long_model_is_drawn_in_rows_with_every_step_named(tmp_path):
    plan = cortexm.plan_memory(chain(120))
    assert plan.num_steps > 100
    fig = figure_of(plan)
    assert len(fig.axes) == -(-plan.num_steps // memory_plan.STEPS_PER_ROW) == 4
    named = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels()]
    assert len(named) == plan.num_steps and named[100] == "100 relu_100"
    assert all(ax.get_xlim()[1] - ax.get_xlim()[0] == memory_plan.STEPS_PER_ROW for ax in fig.axes)
    plan.plot(tmp_path / "rows.png", steps_per_row=60)
    assert (tmp_path / "rows.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match=f"steps_per_row = {bad!r}"):
            plan.plot(tmp_path / "bad.png", steps_per_row=bad)
    assert sorted(os.listdir(tmp_path)) == ["rows.png"]


def test_html_page_is_self_contained_and_describes_every_buffer(tmp_path):
    plan = cortexm.plan_memory(chain(120))
    path = tmp_path / "plan.html"
    path.write_text("old")
    plan.plot(path)
    page = path.read_text()
    assert sorted(os.listdir(tmp_path)) == ["plan.html"]
    assert page.startswith("<!DOCTYPE html>") and page == plan.to_html()
    # Nothing fetched: the only URL is the SVG namespace; no scripts, links or images.
    assert re.findall(r"https?://[^\"' ]+", page) == ["http://www.w3.org/2000/svg"]
    assert not re.search(r"<(script|link|img|iframe)\b", page)
    svg = svg_of(page)
    assert int(svg.get("width")) >= 28 * plan.num_steps  # scrolls sideways instead of shrinking
    titles = [r.find(f"{SVG}title").text for r in svg.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    drawn = [b for b in plan.buffers if b.size]
    assert len(titles) == len(drawn)
    for b in drawn:
        assert any(t.startswith(f"{b.kind} {b.name}: {b.op}") and f"{b.size} B at {b.offset}" in t for t in titles)
    output = next(b for b in plan.buffers if b.kind == "output")
    [rect] = [r for r in svg.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None
              and r.find(f"{SVG}title").text.startswith(f"output {output.name}:")]
    assert float(rect.get("height")) >= 3 and float(rect.get("stroke-width")) == 2
    assert "<pre>" in page and "memory plan: arena" in page  # the table under the timeline


def test_in_place_depthwise_and_pointwise_are_visible():
    plan = zoo.lowered("ds_cnn")
    plan = cortexm.plan_memory(plan)
    lagged = [b for b in plan.buffers if b.in_place and "conv2d" in b.op]
    assert {b.op for b in lagged} == {"cortex_m.quantized_depthwise_conv2d.default", "cortex_m.quantized_conv2d.default"}
    [ax] = figure_of(plan).axes
    hatched = [p for p in ax.patches if p.get_hatch() == "xx" and p.get_width() > 0]
    for b in lagged:
        [box] = [x for x in plan.boxes() if x.name == b.name]
        assert box.shares == "in place" and f"written in place over {b.alias_of}" in box.detail
        assert any(p.get_y() == b.offset and p.get_height() == b.size and p.get_facecolor()[3] > 0 for p in hatched)
    svg = svg_of(plan.to_html())
    overlays = [r for r in svg.iter(f"{SVG}rect") if r.get("fill") == "url(#inplace)"]
    assert len(overlays) == sum(b.in_place for b in plan.buffers if b.size)


def test_a_program_read_back_plots_with_op_names(tmp_path):
    program = cortexm.to_program(zoo.lowered("ds_cnn"))
    loaded = cortexm.load_program(_saved(program, tmp_path))
    plan = loaded.memory_plan()
    assert type(plan).__name__ == "ProgramMemoryPlan" and plan.op_names[0] == program.ops()[0]["name"]
    plan.plot(tmp_path / "p.png")
    plan.plot(tmp_path / "p.html")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "p.html").read_text()
    svg = svg_of(page)
    labels = "".join(t.text or "" for t in svg.iter(f"{SVG}text"))
    assert program.ops()[2]["name"] in labels
    outputs = [b for b in plan.boxes() if b.kind == "output"]
    assert outputs and all(f"output {b.name}:" in page for b in outputs)


def _saved(program, tmp_path):
    path = tmp_path / "m.cmpte"
    program.save(path)
    return path
