"""Program.run_batch and concurrent Program.run: every case on its own arena, the kernels running with
the GIL released, results bit-identical with one-by-one runs and in order; bad cases are named."""

import threading

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn


class TwoInTwoOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, stride=2, groups=8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x, y):
        h = torch.relu(self.dw(torch.relu(self.conv(x))))
        pooled = h.mean(dim=(2, 3))
        return torch.softmax(self.fc(pooled) + y, dim=-1), h


def make_program():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    samples = [(torch.randn(2, 3, 11, 9, generator=g), torch.randn(2, 5, generator=g)) for _ in range(4)]
    model = TwoInTwoOut().eval()
    graph = cortexm.quantize(cortexm.export(model, samples[0]), samples, progress=False)
    return cortexm.to_program(cortexm.lower(graph))


@pytest.fixture(scope="module")
def program():
    return make_program()


def cases(n, seed=5):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((2, 3, 11, 9)).astype(np.float32) * 2,
             rng.standard_normal((2, 5)).astype(np.float32)) for _ in range(n)]


def same(a, b):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return len(a) == len(b) and all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
                                    for x, y in zip(a, b))


@pytest.mark.parametrize("threads", [1, 2, 3, 8, None])
def test_batch_equals_one_by_one_in_order(program, threads):
    inputs = cases(13)
    expected = [program.run(*c) for c in inputs]
    got = program.run_batch(inputs, threads=threads)
    assert len(got) == len(inputs)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert same(g, e), f"case {k}"
    # Distinct inputs give distinct outputs: the order is the cases' own, not a permutation.
    assert not same(got[0], got[1])


def test_single_input_cases_may_be_bare_arrays():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 4), nn.ReLU()).eval()
    calib = [(torch.randn(3, 6),) for _ in range(4)]
    program = cortexm.to_program(cortexm.lower(cortexm.quantize(cortexm.export(model, calib[0]), calib,
                                                                progress=False)))
    xs = [np.random.default_rng(k).standard_normal((3, 6)).astype(np.float32) for k in range(6)]
    got = program.run_batch(xs, threads=2)
    assert all(same(g, program.run(x)) for g, x in zip(got, xs))
    assert program.run_batch([], threads=2) == []


def test_concurrent_runs_from_python_threads(program):
    inputs = cases(24, seed=9)
    expected = [program.run(*c) for c in inputs]
    results = [None] * len(inputs)

    def work(first):
        for k in range(first, len(inputs), 4):
            results[k] = program.run(*inputs[k])

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(same(r, e) for r, e in zip(results, expected))


def test_a_bad_case_is_named(program):
    inputs = cases(5)
    inputs[3] = (inputs[3][0][:, :, :10], inputs[3][1])
    with pytest.raises(ValueError, match=r"case 3: input 0 is float32\[2, 3, 10, 9\]"):
        program.run_batch(inputs, threads=2)
    inputs[3] = (inputs[3][0],)
    with pytest.raises(ValueError, match="case 3: the program takes 2 inputs, got 1"):
        program.run_batch(inputs)
    for threads in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="threads"):
            program.run_batch(cases(2), threads=threads)


def test_eight_threads_a_thousand_runs_each(program):
    """Issue 20's check: 8 threads running one program 1,000 times each give the outputs of a
    sequential run, every time; so does the lowered graph's interpreter from 8 threads."""
    inputs = cases(8, seed=11)
    expected = [program.run(*c) for c in inputs]
    mismatches = []

    def work(t):
        for _ in range(1000):
            if not same(program.run(*inputs[t]), expected[t]):
                mismatches.append(t)
                return

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []


def test_the_lowered_graph_runs_from_threads():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    samples = [(torch.randn(2, 3, 11, 9, generator=g), torch.randn(2, 5, generator=g)) for _ in range(4)]
    lowered = cortexm.lower(cortexm.quantize(cortexm.export(TwoInTwoOut().eval(), samples[0]), samples,
                                             progress=False))
    inputs = cases(8, seed=13)
    expected = [lowered.run(*c) for c in inputs]
    results = [[] for _ in inputs]

    def work(t):
        for _ in range(20):
            results[t].append(lowered.run(*inputs[t]))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(same(r, expected[t]) for t in range(8) for r in results[t])
