"""numpy in the program language beyond what CPython prints: GPU tensors under simulated
CUDA, PyTorch's own refusals explained, the run's own random generator, and what arrays
may not do."""

from __future__ import annotations

import numpy as np

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.same_as_python import printed, refused

N = "import numpy as np\n"
CUDA = N + "x = torch.randn(2, 3, device='cuda')\n"


def test_a_gpu_tensor_copied_back_converts():
    out = printed(CUDA + "n = x.cpu().numpy()\nprint(n.shape, n.dtype)", simulate_cuda=True)
    assert out == ["(2, 3) float32"]


def test_numpy_of_a_gpu_tensor_is_pytorchs_error_explained():
    err = refused(
        CUDA + "n = x.numpy()", "runtime", 3, 5, "can't convert cuda:0", simulate_cuda=True
    )
    assert err.details.explanation == "numpy_cuda"
    err = refused(
        CUDA + "n = np.asarray(x)", "runtime", 3, 5, "can't convert cuda:0", simulate_cuda=True
    )
    assert err.details.explanation == "numpy_cuda"


def test_numpy_of_a_tensor_that_requires_grad_is_explained():
    source = N + "w = torch.ones(2, requires_grad=True)\nn = w.numpy()"
    err = refused(source, "runtime", 3, 5, "requires grad")
    assert err.details.explanation == "numpy_requires_grad"


def test_from_numpy_shares_memory_both_ways():
    source = N + "a = np.zeros(3)\nt = torch.from_numpy(a)\nt[0] = 5\na[1] = 7\nprint(a, t)"
    assert printed(source) == ["[5. 7. 0.] tensor([5., 7., 0.], dtype=torch.float64)"]


def test_random_numbers_come_from_the_runs_own_generator():
    before = np.random.get_state()[1].tobytes()
    source = N + "print(np.random.rand(2))"
    first, again = printed(source, seed=1), printed(source, seed=1)
    assert first == again != printed(source, seed=2)
    assert np.random.get_state()[1].tobytes() == before


def test_arrays_and_tensors_do_not_mix_in_operators():
    refused(N + "a = np.ones(2)\nb = a * torch.ones(2)", "type", 3, 5, "convert one first")


def test_an_array_is_not_a_tensor_for_torch_functions():
    refused(N + "a = np.ones(2)\nb = torch.exp(a)", "runtime", 3, 5, "must be Tensor")


def test_file_methods_and_unknown_names_are_refused_plainly():
    refused(N + "a = np.ones(2)\na.tofile('x')", "forbidden", 3, 1, "cannot read or write files")
    refused(N + "a = np.ones(2)\nb = a.view()", "name", 3, 5, "no method `.view`")
    refused(N + "b = np.fft.fft([1])", "name", 2, 5, "`numpy.fft` is not available")


def test_held_in_a_list_and_shown_as_numpy_shows_it():
    trace = run_program(N + "xs = [np.arange(2), np.float32(0.5)]\nxs\n", RunOptions())
    assert trace.error is None, trace.error
    assert [v.text for v in trace.shown] == ["[array([0, 1]), np.float32(0.5)]"]


def test_numpy_seed_takes_one_integer():
    refused(N + "np.random.seed()", "type", 2, 1, "one integer")
    refused(N + "np.random.seed(1.5)", "type", 2, 1, "one integer")


def test_an_unseeded_generator_draws_from_the_runs_seed():
    before = np.random.get_state()[1].tobytes()
    source = (
        N
        + "a = np.random.default_rng()\nb = np.random.default_rng()\nprint(a.random(2), b.random(2))"
    )
    first, again = printed(source, seed=1), printed(source, seed=1)
    assert first == again != printed(source, seed=2)
    x, y = first[0].split("] [")
    assert x + "]" != "[" + y  # two unseeded generators: two streams
    assert np.random.get_state()[1].tobytes() == before


def test_a_generator_answers_its_draws_only():
    rng = N + "rng = np.random.default_rng(0)\n"
    refused(rng + "s = rng.bit_generator", "type", 3, 5, "no attribute `.bit_generator`")
    err = refused(rng + "rng.normall(size=3)", "type", 3, 1, "no method `.normall`")
    assert err.hint == "Did you mean `normal`?"
    refused(rng + "rng.spawn(2)", "type", 3, 1, "no method `.spawn`")
    refused(N + "np.random.default_rng(1.5)", "type", 2, 1, "integer seed")
    refused(N + "np.random.default_rng(1, 2)", "type", 2, 1, "one seed")


def test_draws_and_linalg_are_sized_before_they_run():
    rng = N + "rng = np.random.default_rng(0)\n"
    refused(rng + "rng.integers(0, 2, size=10**12)", "limit", 3, 1, "would allocate")
    refused(rng + "rng.standard_normal((10**6, 10**6))", "limit", 3, 1, "would allocate")
    refused(rng + "rng.choice(10**12, 3, replace=False)", "limit", 3, 1, "would allocate")
    assert len(printed(rng + "print(rng.choice(10**12, 3))")[0].split()) == 3
    big = N + "a = np.ones((3000, 3000))\n"
    refused(big + "b = np.linalg.inv(a)", "limit", 3, 5, "floating-point operations")
    refused(big + "d = np.linalg.det(a)", "limit", 3, 5, "floating-point operations")
    refused(big + "x = np.linalg.solve(a, a)", "limit", 3, 5, "floating-point operations")


def test_a_singular_matrix_is_numpys_error():
    refused(N + "np.linalg.inv(np.array([[1.0, 2.0], [2.0, 4.0]]))", "runtime", 2, 1, "Singular")
