"""The allow-lists of `numpy` in the program language, kept as data.

Each function a program can reach under `np.` is named here with how its output is sized
before it runs (gradviz.program.runtime.arrays.sizes):

- "create": made from numbers (a shape, a count): sized from them;
- "like": as big as its first argument;
- "bounded": no bigger than its inputs (unary element-wise functions, reductions, views);
  counted after it runs;
- "broadcast": element-wise on several inputs: the broadcast of their shapes;
- "matrix": matrix work (dot, matmul): its output and FLOPs from the shapes;
- "linalg": a square matrix's inverse, a solve, a determinant (np.linalg): its output and
  the FLOPs of the factorisation (n**3 a matrix) from the shapes;
- "outer", "join", "tile", "repeat": sized from their inputs' sizes and counts.

Left out on purpose: `np.empty` (uninitialised memory), files (`load`, `save`, `fromfile`,
`loadtxt`, `memmap`, `tofile`), functions that call back into the program (`vectorize`,
`frompyfunc`, `apply_along_axis`), raw memory (`ctypes`, `lib.stride_tricks`,
`frombuffer`, `fromstring`) and object or string arrays.
"""

from __future__ import annotations


def _kinds(names: str, kind: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), kind)


UNARY = (
    "exp exp2 expm1 log log2 log10 log1p sqrt square tanh sin cos tan arctan sinh cosh "
    "abs absolute negative sign floor ceil round rint reciprocal isnan isinf isfinite "
    "cumsum cumprod sort argsort ravel transpose squeeze expand_dims reshape flip copy "
    "logical_not"
)
REDUCTIONS = (
    "sum mean std var max min amax amin argmax argmin prod median average all any "
    "allclose array_equal count_nonzero unique nonzero"
)
ELEMENTWISE = (
    "add subtract multiply divide true_divide floor_divide power mod maximum minimum clip "
    "where isclose greater greater_equal less less_equal equal not_equal logical_and "
    "logical_or logical_xor"
)

FUNCTIONS: dict[str, str] = {
    **_kinds("zeros ones full arange linspace eye identity", "create"),
    **_kinds("zeros_like ones_like full_like", "like"),
    **_kinds(UNARY + " " + REDUCTIONS, "bounded"),
    **_kinds(ELEMENTWISE, "broadcast"),
    **_kinds("dot matmul", "matrix"),
    **_kinds("outer", "outer"),
    **_kinds("concatenate stack vstack hstack column_stack", "join"),
    "tile": "tile",
    "repeat": "repeat",
    "array": "array",
    "asarray": "array",
}

LINALG: dict[str, str] = {"norm": "bounded", **_kinds("inv solve det", "linalg")}

RANDOM = [
    "seed",
    "rand",
    "randn",
    "randint",
    "random",
    "normal",
    "uniform",
    "permutation",
    "shuffle",
    "choice",
    "default_rng",
]

# Array methods (called on an array: a.sum(), a.reshape(2, 3)), by how they are sized.
METHODS: dict[str, str] = {
    **_kinds(
        "sum mean std var max min argmax argmin prod all any cumsum cumprod round clip "
        "reshape transpose squeeze flatten ravel copy sort argsort nonzero fill",
        "bounded",
    ),
    **_kinds("dot", "matrix"),
    **_kinds("repeat", "repeat"),
    **_kinds("astype tolist item", "own"),
}
SCALAR_METHODS = frozenset(["item", "tolist", "astype", "round"])
SCALAR_ATTRIBUTES = frozenset(["dtype", "shape", "ndim", "size", "itemsize"])
ATTRIBUTES = frozenset(["shape", "dtype", "ndim", "size", "T", "itemsize", "nbytes"])

# np.float32, ..., and the names dtype= and astype() accept as text.
DTYPE_NAMES = [
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool_",
    "half",
    "single",
    "double",
    "float_",
    "int_",
    "intp",
]
TEXT_DTYPES = frozenset(
    [
        "float16",
        "float32",
        "float64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "bool",
        "float",
        "int",
        "half",
        "single",
        "double",
        "f2",
        "f4",
        "f8",
        "i1",
        "i2",
        "i4",
        "i8",
        "u1",
        "?",
    ]
)
NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integers, floats

CONSTANTS = {"pi": 3.141592653589793, "e": 2.718281828459045}

FILE_NAMES = frozenset(["tofile", "dump", "dumps"])
