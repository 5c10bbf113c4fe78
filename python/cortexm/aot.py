"""Ahead-of-time compiler, after ExecuTorch's aot_arm_compiler: model -> .cmpte program file.

    python -m cortexm.aot --model ds_cnn --target cortex-m55+int8 --quantize \\
        [--calibration-samples N] [--calibration-data FILE] [--precision int8|16x8|auto [--count-instructions]] \\
        [--state-feedback OUT:IN] [--activations int8|int16] [--fuse-magnitude] \\
        [--weight-rounding nearest|gptq] [--intermediates DIR] [--bundleio] [--io float|int8] --output ds_cnn.cmpte \\
        [--export-c DIR [--export-c-name NAME]] [--compare [ROWS]] [--compare-plot FILE]
    python -m cortexm.aot --model ds_cnn --check [--target T] [--precision int8|16x8] [--calibration-data FILE]
    python -m cortexm.aot --tflite model.tflite --target cortex-m55+int8 [--io float|int8] --output model.cmpte

--tflite FILE imports a TFLite int8 model with its own qparams (cortexm.from_tflite; no --quantize):
the program takes and gives the file's own input / output dtypes unless --io says otherwise.
--model is a zoo name (cortexm.models) or path.py:factory, where factory() returns
(model, example_inputs) or (model, example_inputs, calibration) with calibration(n) yielding input
tuples. --calibration-data FILE gives the calibration inputs instead: a .npz with one array per
model input, in the model's input order, each stacked [samples, *input shape]; a .npy [samples,
*input shape] for a one-input model; or a directory whose .npz / .npy files hold one sample each
(sorted by name). Without either, the one example input is the calibration set, with a warning.
Errors are one "error:" line (exit code 2 for bad arguments or inputs, 1 when the model cannot be
written as a program); --debug shows the traceback instead. --activations int16 is TFLite's 16x8 mode (int16 activations, int8 weights; e.g. silero_vad
with --fuse-magnitude); --weight-rounding gptq rounds weights against the calibration inputs (give
it more --calibration-samples). --precision auto: int16 for the fewest activation groups (GPTQ and
int16 weights when they help) when int8 misses an output SQNR target (CortexMQuantizer(precision="auto"));
--state-feedback OUT:IN names a recurrent state (output OUT is fed back as input IN at the next step):
the two share one scale and zero point, and auto keeps it at its best accuracy (auto's default: a zoo
model's own, e.g. silero_vad's 1:1);
--count-instructions adds the int8 / auto / 16x8 programs' instructions on the target's core (QEMU).
--io int8 writes a program that takes and gives the int8 tensors at the model's quantize / dequantize
boundary (their scale and zero point in Program.inputs / outputs and the exported header).
--compare prints the per-layer error of the int8 model against the float one on the calibration
inputs (cortexm.compare: SQNR and max error at every quantized tensor, the ROWS worst, default 20);
--compare-plot FILE also plots it (PNG, or the format FILE's extension names).
The output file is written atomically: it is the whole program or it is not touched.
--export-c also writes the program as C for firmware (Program.export_c: <name>_program.c and .h,
<name>_ops.cc, main.cc, cortexm.cmake, CMakeLists.txt; the name is --export-c-name, else the output file's stem).
--check writes nothing: it exports, quantizes (on the calibration inputs, else the example input),
lowers and plans the model and prints cortexm.check's report: every problem with its module path and
every op that would run as float fallback, and why. Exit status 1 when a problem prevents deployment.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import sys
import warnings

import numpy as np

import cortexm

from . import _core
from .quantizer.calibrate import MIN_CALIBRATION_SAMPLES
from .escape import printable
from .export_c import IDENTIFIER, default_name
from .passes import DATA_MOVEMENT


def load_model(spec: str):
    """(model, example_inputs, calibration or None) from a zoo name or path.py:factory."""
    if ":" in spec and spec.split(":", 1)[0].endswith(".py"):
        path, factory_name = spec.split(":", 1)
        if not os.path.exists(path):
            raise ValueError(f"--model {spec!r}: file {path!r} does not exist")
        module_spec = importlib.util.spec_from_file_location("cortexm_aot_model", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        factory = getattr(module, factory_name, None)
        if factory is None:
            raise ValueError(f"--model {spec!r}: {path} has no {factory_name!r}")
        built = factory()
        if not isinstance(built, tuple) or len(built) not in (2, 3):
            raise ValueError(f"--model {spec!r}: {factory_name}() must return (model, example_inputs) "
                             f"or (model, example_inputs, calibration)")
        model, example = built[0], tuple(built[1])
        return model, example, built[2] if len(built) == 3 else None
    names = cortexm.models.names()
    if spec not in names:
        raise ValueError(f"--model {spec!r} is neither a zoo model ({', '.join(names)}) nor path.py:factory")
    model, example, calibration = cortexm.models.get(spec)
    return model, tuple(example), calibration


def _read_arrays(path: str) -> list:
    """The arrays of a .npz (in stored order) or the one array of a .npy."""
    try:
        loaded = np.load(path, allow_pickle=False)
        return [loaded[k] for k in loaded.files] if hasattr(loaded, "files") else [loaded]
    except (OSError, ValueError) as e:
        raise ValueError(f"--calibration-data {path!r}: cannot be read as .npy / .npz ({e})") from None


def _samples(arrays: list, where: str, example: list, stacked: bool) -> list[tuple]:
    """Input tuples from one array per model input: [samples, *shape] each when stacked, else one sample."""
    if len(arrays) != len(example):
        raise ValueError(f"--calibration-data {where} holds {len(arrays)} array(s), the model takes "
                         f"{len(example)} input(s)")
    for k, (a, x) in enumerate(zip(arrays, example)):
        shape = tuple(a.shape[1:]) if stacked else tuple(a.shape)
        if (stacked and a.ndim == 0) or shape != tuple(x.shape):
            want = f"[samples, {', '.join(map(str, x.shape))}]" if stacked else str(list(x.shape))
            raise ValueError(f"--calibration-data {where}: array {k} is {list(a.shape)}, expected {want} "
                             f"(input {k} is {list(x.shape)})")
    if not stacked:
        return [tuple(arrays)]
    counts = sorted({a.shape[0] for a in arrays})
    if len(counts) != 1:
        raise ValueError(f"--calibration-data {where}: the arrays hold different sample counts {counts}")
    return [tuple(a[i] for a in arrays) for i in range(counts[0])]


def load_calibration(path: str, example) -> list[tuple]:
    """Calibration input tuples (torch tensors) from --calibration-data (see the module docstring)."""
    import torch  # optional: cortexm imports without it

    example = [np.asarray(x.detach().numpy() if hasattr(x, "detach") else x) for x in example]
    if os.path.isdir(path):
        files = sorted(f for f in os.listdir(path) if f.endswith((".npz", ".npy")))
        if not files:
            raise ValueError(f"--calibration-data {path!r}: the directory has no .npz / .npy files")
        samples = []
        for f in files:
            full = os.path.join(path, f)
            samples += _samples(_read_arrays(full), repr(full), example, stacked=False)
    elif os.path.isfile(path):
        samples = _samples(_read_arrays(path), repr(path), example, stacked=True)
    else:
        raise ValueError(f"--calibration-data {path!r} does not exist")
    if not samples:
        raise ValueError(f"--calibration-data {path!r} holds no samples")
    return [tuple(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)) for x in sample)
            for sample in samples]


def lowering_summary(graph) -> str:
    """Counts per op: lowered onto cortex_m kernels, left float (with the lowering's reason), data
    movement."""
    lowered, left_float, moves = collections.Counter(), collections.Counter(), collections.Counter()
    reasons = {}
    for node in graph.nodes:
        if node.op.startswith("cortex_m."):
            lowered[node.op] += 1
        elif node.op in DATA_MOVEMENT:
            moves[node.op] += 1
        else:
            left_float[node.op] += 1
            reasons.setdefault(node.op, node.meta.get("lowering", ""))
    lines = [f"ops lowered ({sum(lowered.values())}):"]
    lines += [f"  {n:4d}  {printable(op)}" for op, n in sorted(lowered.items())]
    lines.append(f"ops left float ({sum(left_float.values())}):")
    lines += [f"  {n:4d}  {printable(op)}  {printable(reasons[op])}".rstrip() for op, n in sorted(left_float.items())]
    lines.append(f"data movement ({sum(moves.values())}):")
    lines += [f"  {n:4d}  {printable(op)}" for op, n in sorted(moves.items())]
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m cortexm.aot", description=__doc__.splitlines()[0])
    p.add_argument("--model", "-m", help="zoo model name or path.py:factory")
    p.add_argument("--tflite", metavar="FILE", help="a TFLite int8 model file instead of --model (cortexm.from_tflite: "
                                                    "the file's own qparams, no --quantize)")
    p.add_argument("--target", "-t", default="cortex-m55+int8", help="e.g. cortex-m55+int8, cortex-m4+int8")
    p.add_argument("--quantize", "-q", action="store_true", help="quantize to int8 (Cortex-M needs it)")
    p.add_argument("--calibration-samples", type=int,
                   help="calibration input tuples (default from the model's calibration: 32 for int8, 128 for 16x8 and "
                        "auto, the fewest without a calibration warning; all of --calibration-data)")
    p.add_argument("--calibration-data", metavar="FILE",
                   help=".npz (one stacked array per input), .npy (one input) or a directory of per-sample files")
    p.add_argument("--activations", choices=("int8", "int16"), default="int8",
                   help="activation dtype with --quantize: int8, or int16 (16x8 kernels)")
    p.add_argument("--precision", choices=("int8", "16x8", "auto"),
                   help="with --quantize: int8, 16x8 (= --activations int16) or auto (int16 where needed)")
    p.add_argument("--state-feedback", nargs="+", metavar="OUT:IN",
                   help="with --quantize: output OUT is fed back as input IN at the next step, and the two share "
                        "qparams; auto also keeps it at its best accuracy (auto's default: the zoo model's "
                        "recurrent state, e.g. silero_vad 1:1)")
    p.add_argument("--count-instructions", action="store_true",
                   help="with --precision auto: report the int8 / auto / 16x8 programs' instructions on the "
                        "target's core under QEMU")
    p.add_argument("--fuse-magnitude", action="store_true",
                   help="quantize sqrt(a*a + b*b) as one magnitude (silero's STFT front end)")
    p.add_argument("--weight-rounding", choices=("nearest", "gptq"), default="nearest",
                   help="int8 weight rounding with --quantize (gptq: against the calibration inputs)")
    p.add_argument("--intermediates", "-i", help="directory for the exported, quantized and per-pass graphs")
    p.add_argument("--bundleio", action="store_true", help="bundle the example inputs and expected outputs")
    p.add_argument("--io", choices=("float", "int8", "int16"), default=None,
                   help="the program's inputs and outputs: float (quantized inside), or int8 (int16: int16 and int8) "
                        "without the boundary quantize / dequantize ops (scale and zero point in the program and the "
                        "C header)")
    p.add_argument("--arena-limit", type=int, metavar="BYTES",
                   help="largest arena allowed: above it, the first stages run patch by patch (the split and "
                        "patch grid with the fewest extra MACs that fit); an error when no plan fits")
    p.add_argument("--preserve-inputs", action="store_true",
                   help="keep the graph inputs intact through a run (by default the arena reuses an input's bytes "
                        "once it is dead: the firmware sets the inputs before every run)")
    p.add_argument("--output", "-o", help="program file to write (.cmpte); not with --check")
    p.add_argument("--check", action="store_true",
                   help="write nothing: list every problem that prevents deployment and every float fallback op")
    p.add_argument("--export-c", metavar="DIR", help="also write the program as C sources for firmware into DIR")
    p.add_argument("--export-c-name", metavar="NAME",
                   help="C name of the exported program (default: the output file's stem)")
    p.add_argument("--compare", nargs="?", const=20, type=int, metavar="ROWS",
                   help="with --quantize: print the ROWS (default 20) layers where int8 loses most against float, "
                        "on the calibration inputs (cortexm.compare)")
    p.add_argument("--compare-plot", metavar="FILE", help="with --compare: plot the per-layer SQNR into FILE (.png, .svg)")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    args = p.parse_args(argv)
    if (args.model is None) == (args.tflite is None):
        p.error("give one of --model and --tflite")
    if args.tflite is not None:
        others = [flag for flag, used in (("--quantize", args.quantize), ("--check", args.check),
                                          ("--calibration-data", args.calibration_data),
                                          ("--calibration-samples", args.calibration_samples is not None),
                                          ("--precision", args.precision), ("--bundleio", args.bundleio),
                                          ("--compare", args.compare is not None),
                                          ("--activations", args.activations != "int8"),
                                          ("--fuse-magnitude", args.fuse_magnitude),
                                          ("--weight-rounding", args.weight_rounding != "nearest"))
                  if used]
        if others:
            p.error(f"--tflite takes the file's own quantization: drop {', '.join(others)}")
        if not args.output:
            p.error("the following arguments are required: --output/-o")
        args.quantize = True  # the file is quantized
    if args.check:
        others = [flag for flag, used in (("--output", args.output), ("--export-c", args.export_c),
                                          ("--bundleio", args.bundleio), ("--compare", args.compare is not None),
                                          ("--intermediates", args.intermediates), ("--arena-limit", args.arena_limit),
                                          ("--preserve-inputs", args.preserve_inputs),
                                          ("--io", args.io not in (None, "float")), ("--fuse-magnitude", args.fuse_magnitude),
                                          ("--weight-rounding", args.weight_rounding != "nearest"))
                  if used]
        if others:
            p.error(f"--check writes nothing: drop {', '.join(others)}")
        if args.precision == "auto":
            p.error("--check takes --precision int8 or 16x8")
        args.quantize = True  # the check quantizes
    elif not args.output:
        p.error("the following arguments are required: --output/-o (or give --check)")
    if args.calibration_samples is not None and args.calibration_samples < 1:
        p.error(f"--calibration-samples {args.calibration_samples} must be >= 1")
    if args.calibration_data and not args.quantize:
        p.error("--calibration-data needs --quantize")
    if not args.quantize and (args.activations != "int8" or args.fuse_magnitude or args.weight_rounding != "nearest"):
        p.error("--activations, --fuse-magnitude and --weight-rounding need --quantize")
    if args.arena_limit is not None and args.arena_limit < 1:
        p.error(f"--arena-limit {args.arena_limit} must be >= 1")
    if args.io in ("int8", "int16") and not args.quantize:
        p.error(f"--io {args.io} needs --quantize")
    if args.precision and not args.quantize:
        p.error("--precision needs --quantize")
    if args.count_instructions and args.precision != "auto":
        p.error("--count-instructions needs --precision auto")
    if args.state_feedback is not None and not args.quantize:
        p.error("--state-feedback needs --quantize")
    if args.state_feedback is not None:
        pairs = {}
        for pair in args.state_feedback:
            out, _, in_ = pair.partition(":")
            if not (out.isdigit() and in_.isdigit()):
                p.error(f"--state-feedback {pair!r}: expected OUT:IN, two output / input indices")
            pairs[int(out)] = int(in_)
        args.state_feedback = pairs
    if args.precision and (args.activations != "int8" or (args.precision == "auto" and args.weight_rounding != "nearest")):
        p.error("--precision sets the activations (and, auto, the weight rounding): drop --activations / --weight-rounding")
    try:  # parsed once: lower and to_program get the same target
        args.target_config = _core.CortexMTargetConfig.from_string(args.target)
    except ValueError as e:
        p.error(f"--target {args.target!r}: {e}")
    if args.compare is not None and not args.quantize:
        p.error("--compare needs --quantize")
    if args.compare is not None and args.compare < 1:
        p.error(f"--compare {args.compare} must be >= 1")
    if args.compare_plot and args.compare is None:
        args.compare = 20  # a plot implies the table
        if not args.quantize:
            p.error("--compare-plot needs --quantize")
    if args.export_c_name is not None and not args.export_c:
        p.error("--export-c-name needs --export-c DIR")
    if args.export_c:
        if args.export_c_name is None:
            args.export_c_name = default_name(os.path.splitext(os.path.basename(args.output))[0])
        if not IDENTIFIER.match(args.export_c_name):
            p.error(f"--export-c-name {args.export_c_name!r} must be a C identifier: a letter, then letters, "
                    f"digits or '_'")
        if os.path.exists(args.export_c) and not os.path.isdir(args.export_c):
            p.error(f"--export-c {args.export_c!r} exists and is not a directory")
        directory, cwd = os.path.realpath(args.export_c), os.path.realpath(os.getcwd())
        if cwd == directory or cwd.startswith(directory.rstrip(os.sep) + os.sep):
            p.error(f"--export-c {args.export_c!r} is or holds the current directory: the export replaces the "
                    f"directory as a whole, give one of its own")
    if args.io is None and args.model is not None:
        args.io = "float"
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        if args.tflite is not None:
            return compile_tflite(args)
        return check_model(args) if args.check else compile_model(args)
    except Exception as e:  # one line per error (every listed op or node of one); the traceback with --debug
        if args.debug:
            raise
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, NotImplementedError) and getattr(e, "problems", None):
            message = str(e).strip()
        if isinstance(e, (ValueError, NotImplementedError)):
            print(f"error: {message}", file=sys.stderr)
            return 2
        print(f"error: {type(e).__name__}: {message}", file=sys.stderr)
        return 1


def default_calibration_samples(args) -> int:
    """The fewest samples the measured rule asks for at the precision asked (quantize warns below)."""
    precision = args.precision or ("16x8" if args.activations == "int16" else "int8")
    return MIN_CALIBRATION_SAMPLES[precision]


def calibration_samples(args, example, calibration) -> list:
    if args.calibration_data:
        samples = load_calibration(args.calibration_data, example)
        return samples[:args.calibration_samples] if args.calibration_samples else samples
    if calibration:
        return list(calibration(args.calibration_samples or default_calibration_samples(args)))
    msg = (f"--model {args.model} gives no calibration data: calibrating on its one example input "
           f"(give --calibration-data FILE, or return (model, example_inputs, calibration) from the factory)")
    warnings.warn(msg)
    print(f"warning: {msg}", file=sys.stderr)
    return [example]


def check_model(args) -> int:
    """--check: cortexm.check's report on stdout; 1 when a problem prevents deployment."""
    model, example, calibration = load_model(args.model)
    if args.calibration_data:
        samples = calibration_samples(args, example, calibration)
    elif calibration:
        samples = list(calibration(args.calibration_samples or default_calibration_samples(args)))
    else:
        samples = None  # cortexm.check calibrates on the example inputs
    precision = args.precision or ("16x8" if args.activations == "int16" else "int8")
    report = cortexm.check(model, example, samples, target=args.target_config, precision=precision)
    print(report)
    return 0 if report.ok else 1


def compile_model(args) -> int:
    model, example, calibration = load_model(args.model)
    inputs = [x.detach().numpy() if hasattr(x, "detach") else np.asarray(x) for x in example]
    try:
        graph = cortexm.export(model, example)
    except (ValueError, NotImplementedError):
        raise
    except Exception as e:  # torch.export's own errors: one line naming the step
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise ValueError(f"export of {args.model} failed: {type(e).__name__}: {first}") from e
    if args.intermediates:
        os.makedirs(args.intermediates, exist_ok=True)
        graph.save(os.path.join(args.intermediates, "exported.cmg"))
    if args.quantize:
        samples = calibration_samples(args, example, calibration)
        if args.precision == "auto" and args.state_feedback is None:
            args.state_feedback = (cortexm.models.state_feedback(args.model)
                                   if args.model in cortexm.models.names() else {})
        quantizer = cortexm.CortexMQuantizer(precision="auto", state_feedback=args.state_feedback,
                                             count_instructions=args.count_instructions, cost_target=args.target) \
            if args.precision == "auto" else cortexm.CortexMQuantizer(
            activation_dtype=None if args.precision else args.activations, fuse_magnitude=args.fuse_magnitude,
            weight_rounding=args.weight_rounding, precision=args.precision, state_feedback=args.state_feedback)
        qgraph = cortexm.quantize(graph, samples, quantizer, progress=True)
        if args.precision == "auto":
            print(cortexm.quantization_report(qgraph).precision)
        if args.intermediates:
            qgraph.save(os.path.join(args.intermediates, "quantized.cmg"))
        try:
            lowered = cortexm.lower(qgraph, args.target_config, intermediates=args.intermediates)
        except NotImplementedError as e:  # nodes no program can run, every one listed
            print(f"error: cannot write a program: {e}", file=sys.stderr)
            return 1
        comparison = cortexm.compare(graph, lowered, list(samples)) if args.compare is not None else None
    else:
        msg = ("Cortex-M needs quantization: without --quantize the graph stays float and only a "
               "graph the runtime can run in float is written")
        warnings.warn(msg)
        print(f"warning: {msg}", file=sys.stderr)
        lowered = graph
    print(f"model {args.model} -> {args.target}" + (f" ({quantizer})" if args.quantize else ""))
    print(lowering_summary(lowered))
    if args.quantize and comparison is not None:
        print(comparison.table(limit=args.compare))
        if args.compare_plot:
            comparison.plot(args.compare_plot, title=f"{args.model}: float vs int8 ({args.target})")
            print(f"wrote {args.compare_plot}")
    return write_program(args, lowered, tuple(inputs) if args.bundleio else None)


def compile_tflite(args) -> int:
    """--tflite FILE: cortexm.from_tflite, lowered for the target, the file's own input and output
    dtypes unless --io says otherwise."""
    graph = cortexm.from_tflite(args.tflite)
    if args.intermediates:
        os.makedirs(args.intermediates, exist_ok=True)
        graph.save(os.path.join(args.intermediates, "imported.cmg"))
    if args.io is None:
        args.io = cortexm.tflite.program_io(args.tflite)
    try:
        lowered = cortexm.lower(graph, args.target_config, intermediates=args.intermediates)
    except NotImplementedError as e:
        print(f"error: cannot write a program: {e}", file=sys.stderr)
        return 1
    print(f"tflite {args.tflite} -> {args.target}")
    print(lowering_summary(lowered))
    return write_program(args, lowered, None)


def write_program(args, lowered, bundle_inputs) -> int:
    try:
        program = cortexm.to_program(lowered, target=args.target_config, io=args.io,
                                     bundle_inputs=bundle_inputs,
                                     arena_limit=args.arena_limit, preserve_inputs=args.preserve_inputs)
    except NotImplementedError as e:
        print(f"error: cannot write a program: {e}", file=sys.stderr)
        return 1
    program.save(args.output)
    plan = program.memory_plan()
    print(f"arena {program.arena_size} bytes (lower bound {plan.lower_bound}), "
          f"constants {program.constant_size} bytes, {program.num_ops} ops "
          f"({program.float_ops} float fallback)")
    if program.patch_plan is not None:
        print(program.patch_plan)
    if args.bundleio:
        print(f"bundled {len(program.bundled())} input case(s) with expected outputs")
    if args.io in ("int8", "int16"):
        for kind, specs in (("input", program.inputs), ("output", program.outputs)):
            for spec in specs:
                print(f"{kind} {spec['name']!r}: {spec.get('dtype', args.io)}, scale {spec['scale']!r}, zero point {spec['zero_point']}")
    print(f"wrote {args.output} ({len(program.data)} bytes)")
    if args.export_c:
        written = program.export_c(args.export_c, args.export_c_name)
        print(f"wrote {', '.join(os.path.basename(f) for f in written.values())} into {args.export_c} "
              f"(build: docs/program.md, 'Dropping a model into your firmware')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
