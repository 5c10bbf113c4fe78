"""Says a digit with espeak-ng and lets the kws_digits program hear it, on the host and on an
emulated Cortex-M55:

    python -m cortexm.demo [PROGRAM.cmpte] [--word seven] [--voice en-us+Andy] [--cpu cortex-m55]

PROGRAM is kws_digits lowered for a Cortex-M (`python -m cortexm.aot --model kws_digits
--quantize ...`, as `make demo` does); without it the demo compiles one. Prints what each run
heard with its probabilities, the program's arena and constant sizes and the instructions the
core executed. Exits 1 when the emulated core's outputs differ from the host's.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .models import kws_digits as kws

# A voice variant the model never heard in training (scripts/train_kws_digits.py holds out every
# fourth variant by name).
DEFAULT_VOICE = "en-us+Andy"


def compile_program(cpu: str):
    import cortexm

    model, example, calibration = cortexm.models.get("kws_digits")
    graph = cortexm.quantize(cortexm.export(model, example), calibration(64), progress=False)
    target = f"{cpu}+int8"
    return cortexm.to_program(cortexm.lower(graph, target=target))


def _heard(probabilities: np.ndarray) -> str:
    p = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    i = int(np.argmax(p))
    return f'"{kws.WORDS[i]}" (p = {p[i]:.2f})'


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m cortexm.demo", description=__doc__.splitlines()[0])
    p.add_argument("program", nargs="?", help="kws_digits program file (.cmpte); default: compile one")
    p.add_argument("--word", default="seven", choices=kws.WORDS, help="the digit to say")
    p.add_argument("--voice", default=DEFAULT_VOICE, help="espeak-ng voice (accent+variant)")
    p.add_argument("--speed", type=int, default=150, help="words per minute")
    p.add_argument("--cpu", default="cortex-m55", help="the emulated core ('' skips QEMU)")
    args = p.parse_args(argv)

    import cortexm
    from . import qemu

    try:
        speech = kws.speak(args.word, args.voice, args.speed)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    clip = kws.one_second(speech)
    x = kws.features(clip)
    print(f'said "{args.word}" with espeak-ng (voice {args.voice}, {args.speed} words/min): '
          f"{len(kws.trim(speech)) / kws.SAMPLE_RATE:.2f} s of speech -> {x.shape[2]}x{x.shape[3]} MFCCs")

    program = cortexm.load_program(args.program) if args.program else compile_program(args.cpu or "cortex-m55")
    print(f"program{' ' + args.program if args.program else ''}: {program.target}, {program.num_ops} ops, "
          f"arena {program.arena_size:,} B, constants {program.constant_size:,} B")
    host = np.asarray(program.run(x))
    print(f"host runtime      heard {_heard(host)}")
    status = 0
    if args.cpu:
        run = qemu.run(program, [x], cpu=args.cpu, count_instructions=True)
        target = np.asarray(run.outputs[0])
        same = np.array_equal(target, host)
        print(f"QEMU {args.cpu:12s} heard {_heard(target)} in {run.instructions:,} instructions; outputs "
              f"{'identical with' if same else 'DIFFERENT from'} the host's")
        status = 0 if same else 1
    print("probabilities     " + "  ".join(f"{w} {v:.2f}" for w, v in zip(kws.WORDS, host.reshape(-1))))
    return status


if __name__ == "__main__":
    sys.exit(main())
