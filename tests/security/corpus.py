"""Hostile programs: published sandbox escapes adapted to this language, and bombs.

Each entry is (id, program, kinds, words): the run must end in a ProgramError of one of
`kinds` whose message contains `words` (case-insensitive), with no side effect.

Sources of the escape shapes:
- asteval CVE-2025-24359 (f-string format spec -> __getattribute__), GHSA-vp47-9734-prjw,
  CVE-2026-55244 (SystemExit ends the host);
- simpleeval issue 138 (generator gi_frame), CVE-2026-32640 (modules via attributes);
- RestrictedPython CVE-2023-37271 (generator frames), CVE-2023-41039 (str.format traversal);
- numexpr CVE-2023-39631 (().__class__.__bases__[0].__subclasses__()) and its bypass.
"""

from __future__ import annotations

X = "x = torch.ones(3, requires_grad=True)\n"
UNDERSCORE = "underscore"

ESCAPES = [
    # asteval
    ("asteval-fstring-format-spec", 'f"{x:{x.__class__}}"', "forbidden", UNDERSCORE),
    ("asteval-getattribute", X + 'x.__getattribute__("__class__")', "forbidden", UNDERSCORE),
    (
        "pooling-window",
        "a = torch.rand(1, 3000, 3000)\nb = F.max_pool2d(a, 1500, stride=1)",
        "limit",
        "limit is",
    ),
    ("asteval-systemexit", "raise SystemExit(0)", "forbidden", "raise"),
    ("asteval-exit-builtin", "exit()", "name", "not defined"),
    ("asteval-quit-builtin", "quit(1)", "name", "not defined"),
    # simpleeval
    ("simpleeval-gi-frame", "(i for i in [1]).gi_frame.f_back.f_globals", "forbidden", "generator"),
    ("simpleeval-module-through-attr", 'F.torch.load("m.pt")', "name", "not available"),
    (
        "simpleeval-module-chain",
        'torch.nn.functional.torch.os.system("id")',
        "name",
        "not available",
    ),
    # RestrictedPython
    ("rp-generator-frame", "g = (i for i in [1])\nf = g.gi_frame", "forbidden", "generator"),
    (
        "rp-str-format-traversal",
        X + 's = "{0.__class__.__base__}"\nt = s.format(x)',
        "type",
        "format",
    ),
    ("rp-str-format-attr", X + 's = "{0.grad}"\nt = s.format(x)', "type", "format"),
    # numexpr
    ("numexpr-subclasses", "().__class__.__bases__[0].__subclasses__()", "forbidden", UNDERSCORE),
    ("numexpr-bypass-space", "(). __class__", "forbidden", UNDERSCORE),
    ("numexpr-bypass-newline", "a = (()\n.__class__)", "forbidden", UNDERSCORE),
]

REFLECTION = [
    ("dunder-class", X + "c = x.__class__", "forbidden", UNDERSCORE),
    ("mro", X + "m = x.mro()", "name", "no method"),
    ("dunder-globals", X + "g = x.backward.__globals__", "forbidden", UNDERSCORE),
    ("dunder-dict", X + "d = x.__dict__", "forbidden", UNDERSCORE),
    ("dunder-reduce", X + "r = x.__reduce_ex__(2)", "forbidden", UNDERSCORE),
    (
        "tb-frame",
        "try:\n    1/0\nexcept Exception as e:\n    f = e.__traceback__.tb_frame\n",
        "forbidden",
        "try",
    ),
    ("getattr-built-string", X + 'a = getattr(x, "__cl" + "ass__")', "name", "not defined"),
    ("getattr-builtin", X + 'a = getattr(x, "grad")', "name", "not defined"),
    ("private-name", "_secret = 1", "forbidden", UNDERSCORE),
    ("dunder-import", '__import__("os").system("touch pwned")', "forbidden", UNDERSCORE),
    ("import", "import os", "forbidden", "imports"),
    ("from-import", "from os import system", "forbidden", "imports"),
    ("exec", 'exec("import os")', "name", "not defined"),
    ("eval", 'eval("1 + 1")', "name", "not defined"),
    ("compile", 'compile("1", "f", "eval")', "name", "not defined"),
    ("open-write", 'open("pwned.txt", "w").write("x")', "name", "not defined"),
    ("vars", "v = vars()", "name", "not defined"),
    ("globals", "g = globals()", "name", "not defined"),
    ("breakpoint", "breakpoint()", "name", "not defined"),
    ("type-builtin", X + "t = type(x)", "name", "not defined"),
    ("lambda-globals", "f = lambda: 0\ng = f.__globals__", "forbidden", UNDERSCORE),
    ("def-code", "def f():\n    pass\nc = f.__code__", "forbidden", UNDERSCORE),
    ("class", "class A:\n    pass", "forbidden", "classes"),
    (
        "unicode-fullwidth-underscore",
        X + "c = x.\uff3f\uff3fclass\uff3f\uff3f",
        "syntax",
        "invalid",
    ),
    ("unicode-math-italic-dunder", X + "c = x.__\U0001d4b8lass__", "forbidden", UNDERSCORE),
    (
        "unicode-script-name-then-dunder",
        "\U0001d4cd = torch.ones(2)\ny = \U0001d4cd.__dict__",
        "forbidden",
        UNDERSCORE,
    ),
    (
        "grad-fn-next-functions",
        X + "y = (x * 2).sum()\nn = y.grad_fn.next_functions",
        "type",
        "no attribute",
    ),
    (
        "grad-fn-register-hook",
        X + "y = (x * 2).sum()\ny.grad_fn.register_hook(print)",
        "type",
        "no method",
    ),
    ("tensor-register-hook", X + "x.register_hook(print)", "name", "no method"),
    ("tensor-data-ptr", X + "p = x.data_ptr()", "name", "no method"),
    ("tensor-untyped-storage", X + "s = x.untyped_storage()", "name", "no method"),
    ("bind-a-module", "m = torch.nn", "type", "module"),
    ("bind-a-function", "f = print", "type", "function"),
]

FORMAT = [
    ("fstring", X + 's = f"{x.__class__}"', "forbidden", UNDERSCORE),
    ("fstring-nested-spec", 'a = 1\ns = f"{a:{10**9}}"', "limit", "format width"),
    ("percent-format", 's = "%1000000000d" % 1', "limit", "format width"),
    ("format-method", 's = "{}".format(1)', "type", "format"),
    ("print-file", X + 'print(x, file="pwned.txt")', "type", "sep= and end="),
]

TORCH_IO = [
    ("torch-load", 'm = torch.load("model.pt")', "name", "not available"),
    ("torch-save", X + 'torch.save(x, "pwned.pt")', "name", "not available"),
    ("torch-from-file", 'torch.from_file("/etc/passwd", size=100)', "name", "not available"),
    ("torch-hub", 'torch.hub.load("pytorch/vision", "resnet18")', "name", "not available"),
    ("torch-ops-load-library", 'torch.ops.load_library("/tmp/evil.so")', "name", "not available"),
    ("torch-classes-load-library", 'torch.classes.load_library("x.so")', "name", "not available"),
    ("torch-jit-load", 'torch.jit.load("m.pt")', "name", "not available"),
    (
        "torch-utils-cpp-extension",
        'torch.utils.cpp_extension.load_inline("x", "")',
        "name",
        "not available",
    ),
    (
        "torch-utils-data-workers",
        "torch.utils.data.DataLoader([1], num_workers=2)",
        "name",
        "not available",
    ),
    ("torch-package", 'torch.package.PackageImporter("x")', "name", "not available"),
    ("torch-compile", "torch.compile(F.relu)", "type", "function"),
    (
        "storage-from-file",
        'torch.UntypedStorage.from_file("pwned", True, 10)',
        "name",
        "not available",
    ),
    ("numpy-tofile", X + 'x.detach().numpy().tofile("pwned.bin")', "type", "no method"),
    ("numpy-dump", X + 'n = x.detach().numpy()\nn.dump("pwned")', "type", "no method"),
    ("share-memory", X + "y = x.detach().share_memory_()", "name", "no method"),
]

GLOBAL_STATE = [
    ("set-default-device", 'torch.set_default_device("meta")', "name", "not available"),
    ("set-default-dtype", "torch.set_default_dtype(torch.float64)", "name", "not available"),
    ("set-num-threads", "torch.set_num_threads(64)", "name", "not available"),
    ("set-grad-enabled", "torch.set_grad_enabled(False)", "name", "not available"),
    ("deterministic", "torch.use_deterministic_algorithms(True)", "name", "not available"),
    ("random-module-seed", "torch.random.manual_seed(1)", "name", "not available"),
    ("cuda-set-device", "torch.cuda.set_device(0)", "name", "not available"),
    ("detect-anomaly", "torch.autograd.set_detect_anomaly(True)", "name", "not available"),
    ("rebind-torch", "torch = 1", "forbidden", "built-in name"),
]

MEMORY = [
    ("huge-ones", "a = torch.ones(100000, 100000)", "limit", "would allocate 40 GB"),
    (
        "total-bytes",
        "\n".join(f"a{i} = torch.ones(5000, 5000)" for i in range(5)),
        "limit",
        "in all",
    ),
    (
        "expand-contiguous",
        "a = torch.ones(1)\nb = a.expand(100000, 100000).contiguous()",
        "limit",
        "would allocate",
    ),
    ("repeat", "a = torch.ones(10)\nb = a.repeat(100000, 10000)", "limit", "would allocate"),
    (
        "broadcast-add",
        "a = torch.ones(100000, 1)\nb = torch.ones(1, 100000)\nc = a + b",
        "limit",
        "would allocate 40 GB",
    ),
    (
        "broadcast-where",
        "a = torch.ones(100000, 1)\nb = torch.ones(1, 100000)\nc = torch.where(a > 0, a, b)",
        "limit",
        "would allocate",
    ),
    ("huge-matmul", "a = torch.ones(4000, 4000)\nb = a @ a", "limit", "floating-point operations"),
    (
        "einsum-matmul",
        'a = torch.ones(3000, 3000)\nb = torch.einsum("ij,jk->ik", a, a)',
        "limit",
        "floating-point operations",
    ),
    (
        "einsum-outer",
        'a = torch.ones(10000)\nb = torch.einsum("i,j,k->ijk", a, a, a)',
        "limit",
        "would allocate",
    ),
    (
        "cartesian-prod",
        "a = torch.arange(1000.0)\nb = torch.cartesian_prod(a, a, a)",
        "limit",
        "would allocate",
    ),
    ("kron", "a = torch.ones(1000, 1000)\nb = torch.kron(a, a)", "limit", "would allocate"),
    ("outer", "a = torch.ones(100000)\nb = torch.outer(a, a)", "limit", "would allocate"),
    ("arange-huge", "a = torch.arange(10**12)", "limit", "would allocate"),
    ("linspace-huge", "a = torch.linspace(0, 1, 10**10)", "limit", "would allocate"),
    ("randn-huge", "a = torch.randn(10**5, 10**5)", "limit", "would allocate"),
    ("eye-huge", "a = torch.eye(10**6)", "limit", "would allocate"),
    ("full-huge", "a = torch.full((10**9,), 1.0)", "limit", "would allocate"),
    ("sort-indices", "a = torch.rand(20000000)\nb = a.sort()", "limit", "would allocate"),
    # sizes given as tensors are read as the numbers they hold (issue item 7)
    (
        "arange-tensor-size",
        "n = torch.tensor(200000000)\na = torch.arange(n)",
        "limit",
        "would allocate",
    ),
    (
        "zeros-tensor-size",
        "n = torch.tensor(200000000)\na = torch.zeros(n)",
        "limit",
        "would allocate",
    ),
    (
        "zeros-tensor-in-tuple",
        "n = torch.tensor(200000000)\na = torch.zeros((n,))",
        "limit",
        "would allocate",
    ),
    (
        "full-tensor-size",
        "n = torch.tensor([200000000])\na = torch.full((n,), 1.0)",
        "limit",
        "would allocate",
    ),
    (
        "linspace-tensor-steps",
        "n = torch.tensor(200000000)\na = torch.linspace(0, 1, steps=n)",
        "limit",
        "would allocate",
    ),
    (
        "one-hot-no-classes",
        "i = torch.tensor([0, 100000000])\na = F.one_hot(i)",
        "limit",
        "would allocate",
    ),
    (
        "repeat-tensor-size",
        "x = torch.ones(2)\nn = torch.tensor(100000000)\na = x.repeat(n)",
        "limit",
        "would allocate",
    ),
    ("int-round-negative", "n = round(5, -10**8)", "limit", "bits"),
    ("int-power-tower", "n = 9 ** 9 ** 9", "limit", "bits"),
    ("int-multiply", "n = 10 ** 4000\nm = n * n * n", "limit", "bits"),
    ("int-literal-digits", "n = " + "9" * 5000, "limit", "integer literal"),
    ("string-repeat", 's = "a" * 10**9', "limit", "string"),
    ("string-literal", 's = "' + "a" * 1000 + '"', "limit", "string"),
    ("list-repeat", "l = [0] * 10**9", "limit", "list"),
    (
        "list-literal",
        "a = torch.tensor([" + ", ".join(["1"] * 12000) + "])",
        "limit",
        "list literal",
    ),
]

CPU = [
    (
        "empty-tensor-tolist",
        "a = torch.zeros(100000, 100000, 0)\nb = a.tolist()",
        "limit",
        "values in all",
    ),
    (
        "empty-tensor-numpy",
        "a = torch.rand(100000, 100000, 1000000000, 0)\nb = a.numpy()",
        "limit",
        "values in all",
    ),
    (
        "matmul-chain",
        "a = torch.ones(1500, 1500)\n" + "\n".join(f"b{i} = a @ a" for i in range(8)),
        "limit",
        "floating-point operations",
    ),
    (
        "cumsum-chain",
        "a = torch.rand(20000000)\n" + "\n".join(f"b{i} = a.cumsum(0)" for i in range(40)),
        "limit",
        "in all",
    ),
    (
        "reduction-chain",
        "a = torch.rand(20000000)\n" + "\n".join(f"b{i} = a.sum()" for i in range(40)),
        "limit",
        "values in all",
    ),
    ("statements", "a = 1\n" * 1001, "limit", "lines"),
]

PARSER = [
    ("deep-parentheses", "a = " + "(" * 100000 + "1" + ")" * 100000, "limit", "characters"),
    ("deep-parentheses-short", "a = " + "(" * 1000 + "1" + ")" * 1000, "limit", "nested"),
    ("deep-unary", "a = " + "-" * 40000 + "1", "limit", "nested"),
    ("deep-not", "a = " + "not " * 10000 + "True", "limit", "nested"),
    ("terms-200000", "a = " + "+".join(["1"] * 200000), "limit", "characters"),
    ("terms-20000", "a = " + "+".join(["1"] * 20000), "limit", "nested"),
    ("deep-attribute", "a = torch" + ".nn" * 10000, "limit", "nested"),
    ("deep-method-chain", "a = torch.ones(1)" + ".abs()" * 5000, "limit", "nested"),
    ("deep-list", "a = " + "[" * 100 + "]" * 100, "limit", "nested"),
    (
        "deep-with",
        "".join(" " * i + "with torch.no_grad():\n" for i in range(120)) + " " * 120 + "pass\n",
        "syntax",
        "indentation",
    ),
    ("very-long-input", "a = 1\n" * 5_000_000, "limit", "characters"),
    ("many-lines", "\n" * 20000 + "a = 1", "limit", "lines"),
]

ODD_TEXT = [
    ("nul-byte", "a = 1\x00", "syntax", "NUL"),
    ("binary-latin1", bytes(range(256)).decode("latin-1"), "syntax", "NUL"),
    ("binary-no-nul", bytes(range(1, 256)).decode("latin-1"), "syntax", "syntax"),
    ("lone-surrogate", 'a = "\ud800"', "syntax", "cannot read"),
    ("zero-width-joiner", "b\u200d = 2", "syntax", "non-printable"),
    ("bidi-override-name", "a\u202e = 2", "syntax", "invalid"),
    ("bom-inside", "a = 1\n\ufeffb = 2", "syntax", "non-printable"),
    ("empty", "", "syntax", "empty"),
    ("whitespace-only", "  \n\t\n", "syntax", "empty"),
]

HOSTILE = ESCAPES + REFLECTION + FORMAT + TORCH_IO + GLOBAL_STATE + MEMORY + CPU + PARSER + ODD_TEXT

# Accepted, but must leave no trace outside the run (private RNG, CPU only, no files).
HARMLESS = [
    ("empty-tensor-with-huge-dims", "x = torch.rand(100000, 100000, 1000000000, 0)"),
    ("manual-seed-is-private", "torch.manual_seed(1234)\nr = torch.rand(2)"),
    ("to-cpu", X + "y = x.to('cpu')"),
    ("cuda-query", "n = torch.cuda.device_count()\na = torch.cuda.is_available()"),
    ("print-a-lot", "a = torch.ones(50, 50)\n" + "print(a)\n" * 600),
    ("no-grad-block", "with torch.no_grad():\n    a = torch.ones(2) * 2"),
    ("formfeed", "\x0ca = 1"),
    ("carriage-returns", "a = 1\rb = 2\r"),
]

# Within every cap of the interpreter, but slow: only the worker's wall-clock limit stops
# these (torch.unique sorts 25 million values: seconds each on one thread).
SANDBOX_ONLY = [
    ("unique-sorts", "a = torch.rand(5000, 5000)\nb = torch.unique(a)\nc = torch.unique(a)"),
]
