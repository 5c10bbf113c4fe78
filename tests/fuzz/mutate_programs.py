#!/usr/bin/env python3
"""Program-file mutants through the loader and the runtime, each run checked for arena dependence.

Takes program files (default: the fuzz seeds tests/fuzz/corpus/program and the stored corpus
tests/py/data/program_corpus), makes N mutants (byte flips, truncations, splices of two programs,
and targeted integer fields: tensor offsets, shapes, dim orders, dtypes and locations, op input and
output tensor indices, scratch offsets and sizes, program inputs and outputs, the arena size and
constant segments, set to boundary values, nearby values or another field's value), and runs each
through program_oracle (tests/fuzz/program_oracle.cc): in a child process with a time limit, the
program loaded, then run twice on arenas pre-filled with two different byte patterns, with the same
inputs. Prints the counts of mutants refused, ran, skipped (arena over --max-arena), crashed, hung
and arena-dependent (an op's or the program's outputs differ between the two runs), and saves every
mutant of the last three kinds in --save-dir. Exit status 1 when there is any.

    python tests/fuzz/mutate_programs.py --count 30000
    python tests/fuzz/mutate_programs.py --count 300 --seed 1 --runner build/dev/tests/cpp/program_oracle

Needs only the runner (built by scripts/dev_build.sh or the host preset); imports neither cortexm
nor torch.
"""

import argparse
import collections
import os
import random
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SEEDS = [ROOT / "tests" / "fuzz" / "corpus" / "program", ROOT / "tests" / "py" / "data" / "program_corpus"]
RUNNERS = [ROOT / "build" / d / "tests" / "cpp" / "program_oracle" for d in ("dev", "host")]
FINDINGS = ("crash", "hang", "arena_dependent")

# Field indices of program.fbs's tables (their order in the schema).
PROGRAM_TENSORS, PROGRAM_OPS, PROGRAM_INPUTS, PROGRAM_OUTPUTS, PROGRAM_ARENA_SIZE, PROGRAM_CONSTANTS = 3, 4, 5, 6, 7, 8
TENSOR_DTYPE, TENSOR_SHAPE, TENSOR_DIM_ORDER, TENSOR_LOCATION, TENSOR_OFFSET, TENSOR_CONSTANT = 1, 2, 3, 5, 6, 7
OP_KERNEL, OP_INPUTS, OP_OUTPUTS, OP_SCRATCH_OFFSET, OP_SCRATCH_SIZE = 1, 4, 5, 6, 7

BOUNDARY = [0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 64, 127, 128, 255, 256, 4095, 4096, 65535, 65536,
            2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**62, 2**63 - 1, -1, -2, -16, -(2**31), -(2**63)]


class Slot:
    """One integer in a program buffer: its position, struct format and what it means."""

    def __init__(self, at, fmt, kind, arena=False):
        self.at, self.fmt, self.kind, self.arena = at, fmt, kind, arena


def _u32(b, at):
    return struct.unpack_from("<I", b, at)[0]


def _field(b, table, index):
    """Position of field `index` of the table at `table`, or None when absent."""
    vtable = table - struct.unpack_from("<i", b, table)[0]
    if 4 + 2 * index >= struct.unpack_from("<H", b, vtable)[0]:
        return None
    offset = struct.unpack_from("<H", b, vtable + 4 + 2 * index)[0]
    return table + offset if offset else None


def _vector(b, at):
    """(position of the first element, count) of the vector an offset field at `at` points to."""
    v = at + _u32(b, at)
    return v + 4, _u32(b, v)


def _tables(b, table, index):
    at = _field(b, table, index)
    if at is None:
        return []
    first, n = _vector(b, at)
    return [first + 4 * i + _u32(b, first + 4 * i) for i in range(n)]


def slots(data):
    """The integer fields mutants target, in a program that is a valid FlatBuffer (a seed)."""
    b = bytes(data)
    out = []

    def scalar(table, index, fmt, kind):
        at = _field(b, table, index)
        if at is not None:
            out.append(Slot(at, fmt, kind))

    def elements(table, index, fmt, kind):
        at = _field(b, table, index)
        if at is not None:
            first, n = _vector(b, at)
            out.extend(Slot(first + struct.calcsize(fmt) * i, fmt, kind) for i in range(n))

    root = 4 + _u32(b, 4)
    at = _field(b, root, PROGRAM_ARENA_SIZE)
    if at is not None:
        out.append(Slot(at, "<Q", "size", arena=True))
    elements(root, PROGRAM_INPUTS, "<i", "tensor")
    elements(root, PROGRAM_OUTPUTS, "<i", "tensor")
    at = _field(b, root, PROGRAM_CONSTANTS)
    if at is not None:
        first, n = _vector(b, at)
        for i in range(n):
            out += [Slot(first + 16 * i, "<Q", "offset"), Slot(first + 16 * i + 8, "<Q", "size")]
    for t in _tables(b, root, PROGRAM_TENSORS):
        scalar(t, TENSOR_DTYPE, "<B", "enum")
        elements(t, TENSOR_SHAPE, "<q", "dim")
        elements(t, TENSOR_DIM_ORDER, "<B", "enum")
        scalar(t, TENSOR_LOCATION, "<B", "enum")
        scalar(t, TENSOR_OFFSET, "<Q", "offset")
        scalar(t, TENSOR_CONSTANT, "<I", "index")
    for op in _tables(b, root, PROGRAM_OPS):
        scalar(op, OP_KERNEL, "<B", "enum")
        elements(op, OP_INPUTS, "<i", "tensor")
        elements(op, OP_OUTPUTS, "<i", "tensor")
        scalar(op, OP_SCRATCH_OFFSET, "<Q", "offset")
        scalar(op, OP_SCRATCH_SIZE, "<Q", "size")
    return out


def _read(data, slot):
    return struct.unpack_from(slot.fmt, data, slot.at)[0]


def _write(data, slot, value):
    bits = 8 * struct.calcsize(slot.fmt)
    value &= (1 << bits) - 1
    if slot.fmt[-1].islower() and value >= 1 << (bits - 1):  # signed formats
        value -= 1 << bits
    struct.pack_into(slot.fmt, data, slot.at, value)


class Seed:
    def __init__(self, path, data):
        self.path, self.data = path, bytes(data)
        try:
            self.slots = slots(self.data)
        except (struct.error, IndexError):
            self.slots = []  # not a valid FlatBuffer (a corrupt corpus file): bytes only
        self.by_kind = collections.defaultdict(list)
        for s in self.slots:
            self.by_kind[s.kind].append(s)
        self.arena_size = _read(self.data, self.slots[0]) if self.slots and self.slots[0].arena else 0
        self.num_tensors = 1 + max((_read(self.data, s) for s in self.by_kind["tensor"]), default=0)


def _fix_prefix(data, rng):
    if len(data) >= 4 and rng.random() < 0.9:  # mostly a size prefix that matches
        struct.pack_into("<I", data, 0, len(data) - 4)
    return data


def targeted(seed, seeds, rng):
    """One to three targeted fields changed: boundary values, nearby values, or the value of a field
    of the same kind (in this program or another), which makes tensors alias and ops read what
    another op writes."""
    data = bytearray(seed.data)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        slot = rng.choice(seed.slots)
        old = _read(data, slot)
        how = rng.random()
        if how < 0.15 and slot.kind == "offset":  # somewhere in the arena, aligned
            value = rng.randrange(0, seed.arena_size + 1, 16)
        elif how < 0.15 and slot.kind == "tensor":
            value = rng.randrange(-1, seed.num_tensors + 1)
        elif how < 0.35:
            donor = rng.choice(seeds if rng.random() < 0.2 else [seed])
            same = donor.by_kind.get(slot.kind)
            value = _read(donor.data, rng.choice(same)) if same else old
        elif how < 0.7:
            step = {"offset": rng.choice((1, 8, 16, 64, 256)), "size": rng.choice((1, 16, 64, 1024))}.get(slot.kind, 1)
            value = old + rng.choice((-step, step, -2 * step, 2 * step))
        elif how < 0.9:
            value = rng.choice(BOUNDARY)
        else:
            value = rng.getrandbits(8 * struct.calcsize(slot.fmt))
        _write(data, slot, value)
    return data


def flips(seed, rng):
    data = bytearray(seed.data)
    for _ in range(rng.randint(1, 4) if data else 0):
        at = rng.randrange(4, len(data)) if len(data) > 4 else rng.randrange(len(data))
        data[at] ^= rng.randint(1, 255)
    return data


def truncation(seed, rng):
    return _fix_prefix(bytearray(seed.data[:rng.randrange(max(1, len(seed.data)))]), rng)


def splice(seed, seeds, rng):
    other = rng.choice(seeds).data
    head = bytearray(seed.data[:rng.randrange(len(seed.data) + 1)])
    return _fix_prefix(head + other[rng.randrange(len(other) + 1):], rng)


def mutant(seeds, structured, rng):
    """One mutant: targeted fields of a seed the walker read half of the time, else bytes."""
    how = rng.random()
    if structured and how < 0.5:
        return targeted(rng.choice(structured), seeds, rng)
    seed = rng.choice(seeds)
    if how < 0.75:
        return flips(seed, rng)
    if how < 0.87:
        return truncation(seed, rng)
    return splice(seed, seeds, rng)


def find_runner():
    if os.environ.get("CORTEXM_PROGRAM_ORACLE"):
        return Path(os.environ["CORTEXM_PROGRAM_ORACLE"])
    built = [r for r in RUNNERS if r.exists()]
    if not built:
        raise SystemExit("program_oracle is not built: run scripts/dev_build.sh program_oracle "
                         "(or cmake --build --preset host --target program_oracle), or pass --runner")
    return max(built, key=lambda r: r.stat().st_mtime)


def read_seeds(paths):
    files = []
    for p in map(Path, paths):
        files += sorted(f for f in p.iterdir() if f.suffix == ".cmpte") if p.is_dir() else [p]
    return [Seed(f, f.read_bytes()) for f in files]


class Runner:
    """program_oracle reading records on stdin, one result line per record."""

    def __init__(self, runner, timeout, max_arena):
        self.proc = subprocess.Popen([str(runner), "--timeout", str(timeout), "--max-arena", str(max_arena)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def check(self, data):
        self.proc.stdin.write(struct.pack("<I", len(data)) + bytes(data))
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().decode().split()
        if not line:
            raise RuntimeError(f"program_oracle exited ({self.proc.wait()})")
        return line[0], " ".join(line[1:])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()


def run(count, seed=0, seeds=None, runner=None, timeout=10, max_arena=64 << 20, save_dir=None, progress=None):
    """Makes and checks `count` mutants; returns (Counter of outcomes, [(outcome, detail, path)] of
    the findings). The mutants depend on `seed` and the seed files only."""
    rng = random.Random(seed)
    corpus = read_seeds(seeds or DEFAULT_SEEDS)
    if not corpus:
        raise SystemExit("no seed programs")
    oracle = Runner(runner or find_runner(), timeout, max_arena)
    # Targeted mutants start from the seeds that load and run.
    structured = [s for s in corpus if s.slots and oracle.check(s.data)[0] == "ran"]
    counts = collections.Counter()
    findings = []
    try:
        for i in range(count):
            data = mutant(corpus, structured, rng)
            outcome, detail = oracle.check(data)
            counts[outcome] += 1
            if outcome in FINDINGS:
                path = None
                if save_dir is not None:
                    Path(save_dir).mkdir(parents=True, exist_ok=True)
                    path = Path(save_dir) / f"{outcome}-{seed}-{i}.cmpte"
                    path.write_bytes(bytes(data))
                findings.append((outcome, detail, path))
            if progress and (i + 1) % progress == 0:
                print(f"{i + 1} mutants: {dict(counts)}", file=sys.stderr, flush=True)
    finally:
        oracle.close()
    return counts, findings


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1000, help="mutants to make (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--seeds", nargs="*", help="seed program files or directories of .cmpte files")
    parser.add_argument("--runner", help="program_oracle binary (default: $CORTEXM_PROGRAM_ORACLE, else the newest "
                                         "of build/dev and build/host)")
    parser.add_argument("--timeout", type=int, default=10, help="seconds a mutant may run (default 10): longer is a hang")
    parser.add_argument("--max-arena", type=int, default=64 << 20, help="larger arenas are not run (default 64 MiB)")
    parser.add_argument("--save-dir", default=str(ROOT / "build" / "mutants"), help="where findings are saved")
    args = parser.parse_args()
    start = time.monotonic()
    counts, findings = run(args.count, args.seed, args.seeds, args.runner, args.timeout, args.max_arena,
                           args.save_dir, progress=max(1, args.count // 10))
    for outcome, detail, path in findings:
        print(f"{outcome} {detail}: {path}")
    names = ("refused", "ran", "skipped", "crash", "hang", "arena_dependent")
    print(f"{args.count} mutants in {time.monotonic() - start:.0f} s: " +
          ", ".join(f"{counts[n]} {n}" for n in names))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
