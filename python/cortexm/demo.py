"""Says a digit with espeak-ng and lets the kws_digits program hear it, on the host and on an
emulated Cortex-M55:

    python -m cortexm.demo [PROGRAM.cmpte] [--word seven] [--voice en-us+Andy] [--cpu cortex-m55]

PROGRAM is kws_digits lowered for a Cortex-M (`python -m cortexm.aot --model kws_digits
--quantize ...`, as `make demo` does); without it the demo compiles one. Prints what each run
heard with its probabilities, the program's arena and constant sizes and the instructions the
core executed. Exits 1 when the emulated core's outputs differ from the host's (or QEMU or the
toolchain is missing), 2 with one "error:" line for a bad argument or program file.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import cortexm

from . import qemu
from .escape import printable
from .models import kws_digits as kws
from .run import error

# A voice variant the model never heard in training (scripts/train_kws_digits.py holds out every
# fourth variant by name).
DEFAULT_VOICE = "en-us+Andy"


def compile_program(cpu: str):
    model, example, calibration = cortexm.models.get("kws_digits")
    graph = cortexm.quantize(cortexm.export(model, example), calibration(64), progress=False)
    target = f"{cpu}+int8"
    return cortexm.to_program(cortexm.lower(graph, target=target))


def _heard(probabilities: np.ndarray) -> str:
    p = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    i = int(np.argmax(p))
    return f'"{kws.WORDS[i]}" (p = {p[i]:.2f})'


def _error(message) -> int:
    """One 'error:' line on stderr (run.error); the exit status of a bad argument or input."""
    error(message)
    return 2


def _check_kws_program(program, path: str) -> None:
    """ValueError unless program takes kws_digits' one float MFCC input and gives its 10 probabilities."""
    shape = list(kws.features(np.zeros(kws.SAMPLE_RATE, np.float32)).shape)
    takes = [f"{i['dtype']}{list(i['shape'])}" for i in program.inputs]
    gives = [f"{o['dtype']}{list(o['shape'])}" for o in program.outputs]
    if takes != [f"float32{shape}"] or len(gives) != 1 or not gives[0].startswith("float32") \
            or int(np.prod(program.outputs[0]["shape"], dtype=np.int64)) != len(kws.WORDS):
        raise ValueError(f"{path!r} is not a kws_digits program: it takes {', '.join(takes) or 'no input'} and gives "
                         f"{', '.join(gives) or 'no output'}; the demo needs float32{shape} MFCCs in and "
                         f"{len(kws.WORDS)} float32 probabilities out (python -m cortexm.aot --model kws_digits "
                         f"--quantize ...)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m cortexm.demo", description=__doc__.splitlines()[0])
    p.add_argument("program", nargs="?", help="kws_digits program file (.cmpte); default: compile one")
    p.add_argument("--word", default="seven", choices=kws.WORDS, help="the digit to say")
    p.add_argument("--voice", default=DEFAULT_VOICE, help="espeak-ng voice (accent+variant)")
    p.add_argument("--speed", type=int, default=150,
                   help=f"words per minute ({kws.SPEEDS[0]} to {kws.SPEEDS[1]}, espeak-ng's range)")
    p.add_argument("--cpu", default="cortex-m55", help="the emulated core ('' skips QEMU)")
    args = p.parse_args(argv)

    if args.cpu and args.cpu not in qemu.MACHINES:
        return _error(f"--cpu {args.cpu!r} has no QEMU machine: choose one of {', '.join(qemu.MACHINES)} "
                      f"(or '' to skip QEMU)")
    program = None
    if args.program:  # before the speech: a wrong file is the likelier mistake
        try:
            program = cortexm.load_program(args.program)
            _check_kws_program(program, args.program)
        except OSError as e:
            return _error(f"cannot read program {args.program!r}: {e.strerror or e}")
        except ValueError as e:
            return _error(e)
    try:
        speech = kws.speak(args.word, args.voice, args.speed)
    except (ValueError, RuntimeError) as e:  # a voice or speed espeak-ng refuses; no espeak-ng
        return _error(e)
    clip = kws.one_second(speech)
    x = kws.features(clip)
    print(f'said "{args.word}" with espeak-ng (voice {printable(args.voice)}, {args.speed} words/min): '
          f"{len(kws.trim(speech)) / kws.SAMPLE_RATE:.2f} s of speech -> {x.shape[2]}x{x.shape[3]} MFCCs")

    program = program or compile_program(args.cpu or "cortex-m55")
    print(f"program{' ' + printable(args.program) if args.program else ''}: {printable(program.target)}, "
          f"{program.num_ops} ops, arena {program.arena_size:,} B, constants {program.constant_size:,} B")
    host = np.asarray(program.run(x))
    print(f"host runtime      heard {_heard(host)}")
    status = 0
    if args.cpu:
        try:
            run = qemu.run(program, [x], cpu=args.cpu, count_instructions=True)
        except ValueError as e:  # a program that does not fit the machine
            return _error(e)
        except (RuntimeError, TimeoutError, OSError) as e:  # a missing tool, a failed build
            error(e)
            return 1
        target = np.asarray(run.outputs[0])
        same = np.array_equal(target, host)
        print(f"QEMU {args.cpu:12s} heard {_heard(target)} in {run.instructions:,} instructions; outputs "
              f"{'identical with' if same else 'DIFFERENT from'} the host's")
        status = 0 if same else 1
    print("probabilities     " + "  ".join(f"{w} {v:.2f}" for w, v in zip(kws.WORDS, host.reshape(-1))))
    return status


if __name__ == "__main__":
    sys.exit(main())
