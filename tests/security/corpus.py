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
DC = "from dataclasses import dataclass\n"
L = "from torch.utils.data import DataLoader\n"
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
        "forbidden",
        "format field",
    ),
    ("rp-str-format-attr", X + 's = "{0.grad}"\nt = s.format(x)', "forbidden", "attributes"),
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
        "machinery",
    ),
    ("getattr-built-string", X + 'a = getattr(x, "__cl" + "ass__")', "name", "not defined"),
    ("getattr-builtin", X + 'a = getattr(x, "grad")', "name", "not defined"),
    ("private-name", "__secret = 1", "forbidden", UNDERSCORE),
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
    ("class", "class A(metaclass=type):\n    pass", "forbidden", "metaclass"),
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
        "grad-fn-metadata",
        X + "y = (x * 2).sum()\nn = y.grad_fn.metadata",
        "type",
        "no attribute",
    ),
    (
        "grad-fn-register-hook",
        X + "y = (x * 2).sum()\ny.grad_fn.register_hook(print)",
        "type",
        "no method",
    ),
    ("tensor-data-ptr", X + "p = x.data_ptr()", "name", "no method"),
    ("tensor-untyped-storage", X + "s = x.untyped_storage()", "name", "no method"),
    ("bind-a-module", "m = torch.nn", "type", "module"),
    ("bind-a-function", "f = print", "type", "function"),
]

FORMAT = [
    ("fstring", X + 's = f"{x.__class__}"', "forbidden", UNDERSCORE),
    ("fstring-nested-spec", 'a = 1\ns = f"{a:{10**9}}"', "limit", "format width"),
    ("percent-format", 's = "%1000000000d" % 1', "limit", "format width"),
    ("format-method-width", 's = "{:{}}".format(1, 10**9)', "limit", "format width"),
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
    (  # DataLoader is part of the language now: worker processes still are not
        "torch-utils-data-workers",
        "torch.utils.data.DataLoader([1], num_workers=2, worker_init_fn=print)",
        "forbidden",
        "worker_init_fn",
    ),
    ("torch-package", 'torch.package.PackageImporter("x")', "name", "not available"),
    ("torch-compile", "torch.compile(F.relu)", "name", "torch.compile"),
    (
        "storage-from-file",
        'torch.UntypedStorage.from_file("pwned", True, 10)',
        "name",
        "not available",
    ),
    (
        "numpy-tofile",
        X + 'x.detach().numpy().tofile("pwned.bin")',
        "forbidden",
        "cannot read or write files",
    ),
    (
        "numpy-dump",
        X + 'n = x.detach().numpy()\nn.dump("pwned")',
        "forbidden",
        "cannot read or write files",
    ),
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
    ("autograd-profiler", "torch.autograd.profiler.profile()", "name", "not available"),
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
    # A literal is held by the source's own cap (and the public host's longest string).
    ("string-literal", 's = "' + "a" * 60_000 + '"', "limit", "characters"),
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
        "items in all",
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

# Work no byte cap sees: a tensor with no values (shape (N, 0)) weighs 0 bytes yet makes N
# Python objects when split into rows or lists, and Python compares tensors held in lists
# in C. Each is refused before it runs (issue finding 5).
EMPTY_ROWS = "x = torch.zeros(10000000, 0)\n"
CROSSED = "a = torch.zeros(30000, 1)\nb = torch.zeros(1, 30000)\n"
LOADER = "ds = torch.utils.data.TensorDataset(torch.zeros(10**7, 0))\n"
OBJECTS = [
    ("unbind-empty-rows", EMPTY_ROWS + "parts = x.unbind()", "limit", "items per list"),
    ("tolist-empty-rows", EMPTY_ROWS + "rows = x.tolist()", "limit", "items per list"),
    ("numpy-empty-rows", EMPTY_ROWS + "rows = x.numpy().tolist()", "limit", "items per list"),
    ("chunk-into-pieces", EMPTY_ROWS + "parts = x.chunk(10**7)", "limit", "items per list"),
    ("split-into-pieces", EMPTY_ROWS + "parts = torch.split(x, 1)", "limit", "items per list"),
    ("loop-over-empty-rows", "for r in torch.zeros(10**7, 0):\n    pass", "limit", "would run"),
    (
        "loader-batches-of-one",
        LOADER + "l = torch.utils.data.DataLoader(ds, batch_size=1)\nfor b in l:\n    pass",
        "limit",
        "would run",
    ),
    (
        "loader-one-big-batch",
        LOADER + "l = torch.utils.data.DataLoader(ds, batch_size=10**7)\nfor b in l:\n    pass",
        "limit",
        "DataLoader batch",
    ),
    ("list-equal-broadcast", CROSSED + "same = [a] == [b]", "limit", "would allocate"),
    ("tuple-unequal-broadcast", CROSSED + "other = (a, 1) != (b, 1)", "limit", "would allocate"),
    ("dict-equal-broadcast", CROSSED + 'same = {"k": a} == {"k": b}', "limit", "would allocate"),
    ("in-list-broadcast", CROSSED + "found = a in [b]", "limit", "would allocate"),
    ("list-count-broadcast", CROSSED + "n = [a, b].count(b)", "limit", "would allocate"),
    ("list-index-broadcast", CROSSED + "i = [b, a].index(a)", "limit", "would allocate"),
    ("list-remove-broadcast", CROSSED + "l = [b, a]\nl.remove(a)", "limit", "would allocate"),
    ("max-of-list-broadcast", CROSSED + "m = max([a, b])", "limit", "would allocate"),
    ("min-of-nested-broadcast", CROSSED + "m = min([[a], [b]])", "limit", "would allocate"),
    ("sorted-nested-tensors", CROSSED + "s = sorted([[a], [b]])", "type", "sorting compares"),
    ("tensor-in-long-range", "t = torch.tensor(-1)\nf = t in range(10**6)", "limit", "would run"),
]

# The objects the caps did not count (finding 5's second half): lists that tolist() and
# numpy() make counted, with their numbers, before they are made, and what they and a
# tensor's pieces take charged to the memory budget (a tensor object takes about 640 bytes
# with no values); comprehensions over a DataLoader planned from its batches. Each is
# refused with its kind, words and (line, column) before the work it stops.
LOADER_OF_ONES = LOADER + "l = torch.utils.data.DataLoader(ds, batch_size=1)\n"
HELD_ROWS = "x = torch.zeros(100000, 0)\n"
COUNTED = [
    ("tolist-empty-cube", "x = torch.zeros(2000, 2000, 0)\nr = x.tolist()", "limit",
     "Python objects", (2, 5)),
    # .numpy() of it is one empty array; its tolist() makes the 4 million lists
    ("numpy-empty-cube", "x = torch.zeros(2000, 2000, 0)\nr = x.numpy().tolist()", "limit",
     "Python objects", (2, 5)),
    ("tolist-many-values", "x = torch.zeros(400, 400, 25)\nr = x.tolist()", "limit",
     "Python objects", (2, 5)),
    ("tolist-long-row", "x = torch.zeros(10**6)\nr = x.tolist()", "limit", "items per list",
     (2, 5)),
    ("numpy-long-row", "x = torch.zeros(10**6)\nr = x.numpy().tolist()", "limit",
     "items per list", (2, 5)),
    ("tolist-deep-dims", "x = torch.zeros([1] * 100)\nr = x.tolist()", "limit", "deep", (2, 5)),
    ("unbinds-held", HELD_ROWS + "ps = [x.unbind() for i in range(50)]", "limit", "in all",
     (2, 7)),
    ("splits-held", HELD_ROWS + "ps = [torch.split(x, 1) for i in range(50)]", "limit",
     "in all", (2, 7)),
    ("unbind-rows-of-rows", "x = torch.zeros(3000, 3000, 0)\np = [t.unbind() for t in x.unbind()]",
     "limit", "in all", (2, 6)),
    ("comprehension-over-loader", LOADER_OF_ONES + "r = [b for b in l]", "limit", "would run",
     (3, 17)),
    ("comprehension-enumerate-loader", LOADER_OF_ONES + "r = [i for i, b in enumerate(l)]",
     "limit", "would run", (3, 20)),
    ("comprehension-zip-loaders", LOADER_OF_ONES + "r = [i for i, b in zip(l, l)]", "limit",
     "would run", (3, 20)),
    ("set-comprehension-loader", LOADER_OF_ONES + "r = {1 for b in l}", "limit", "would run",
     (3, 17)),
    ("dict-comprehension-loader", LOADER_OF_ONES + "r = {i: 1 for i, b in enumerate(l)}",
     "limit", "would run", (3, 23)),
    # a generator expression is lazy: the loop that reads it whole (sum) is refused up front
    ("generator-sum-loader", LOADER_OF_ONES + "r = sum(1 for b in l)", "limit", "would run",
     (3, 5)),
]  # fmt: skip

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

NET = "net = nn.Linear(2, 2)\n"
OPT = NET + "opt = optim.SGD(net.parameters(), lr=0.1)\n"
DS = "ds = torch.utils.data.TensorDataset(torch.ones(4, 2))\n"
LOADER = "l = torch.utils.data.DataLoader"

# Layers, optimizers and data loaders (gradviz.program.objects.layers, .optimizers, .data).
LAYERS = [
    ("nn-dunder-class", NET + "c = net.__class__", "forbidden", UNDERSCORE),
    ("optim-dunder-dict", OPT + "d = opt.__dict__", "forbidden", UNDERSCORE),
    (
        "nn-private-modules",
        "net = nn.Sequential(nn.ReLU())\nm = net._modules",
        "forbidden",
        UNDERSCORE,
    ),
    ("nn-private-parameters", NET + "p = net._parameters", "forbidden", UNDERSCORE),
    ("nn-forward-globals", NET + "g = net.forward.__globals__", "forbidden", UNDERSCORE),
    ("nn-forward-hook", NET + "net.register_forward_hook(print)", "name", "hooks"),
    ("nn-backward-hook", NET + "net.register_full_backward_hook(print)", "name", "hooks"),
    (
        "nn-utils-prune",
        NET + "nn.utils.prune.l1_unstructured(net, 'weight', 0.5)",
        "name",
        "not available",
    ),
    ("nn-register-buffer", NET + "net.register_buffer('b', torch.ones(1))", "name", "table"),
    ("nn-module-base", "m = nn.Module()", "type", "cannot be called"),
    ("nn-init-orthogonal", "w = torch.ones(2, 2)\nnn.init.orthogonal_(w)", "name", "not available"),
    ("nn-utils", NET + "nn.utils.clip_grad_norm_(net.parameters(), 1.0)", "name", "not available"),
    ("nn-jit-script", NET + "s = torch.jit.script(net)", "name", "not available"),
    ("nn-share-memory", NET + "net.share_memory()", "name", "shared memory"),
    ("nn-bind-class-bomb", "L = nn.Linear\nm = L(10 ** 6, 10 ** 6)", "limit", "parameters"),
    ("optim-bind-namespace", "o = optim", "type", "module"),
    ("nn-device-kwarg", "net = nn.Linear(2, 2, device='meta')", "forbidden", "device="),
    ("nn-to-callable", NET + "net.to(print)", "type", "device or a dtype"),
    (
        "nn-activation-callable",
        "t = nn.TransformerEncoderLayer(8, 2, activation=print)",
        "type",
        "activation",
    ),
    (
        "nn-state-dict-save",
        NET + "sd = net.state_dict()\ntorch.save(sd, 'w.pt')",
        "name",
        "not available",
    ),
    ("nn-load-state-dict-file", NET + "net.load_state_dict('w.pt')", "type", "no files"),
    (
        "nn-load-state-dict-torch-load",
        NET + "net.load_state_dict(torch.load('w.pt'))",
        "name",
        "not available",
    ),
    (
        "nn-contains-itself",
        "s = nn.Sequential(nn.ReLU())\ns.append(s)\ny = s(torch.ones(1))",
        "type",
        "itself",
    ),
    (
        "nn-deep-nesting",
        "a = nn.ReLU()\n" + "a = nn.Sequential(a)\n" * 40,
        "limit",
        "containers deep",
    ),
    ("nn-giant-linear", "net = nn.Linear(10**6, 10**6)", "limit", "parameters per model"),
    ("nn-giant-conv", "c = nn.Conv2d(4096, 4096, 64)", "limit", "parameters per model"),
    ("nn-giant-embedding", "e = nn.Embedding(10**12, 10**12)", "limit", "parameters per model"),
    (
        "nn-many-layers",
        "\n".join(f"a{i} = nn.Linear(3000, 3000)" for i in range(7)),
        "limit",
        "parameters in all",
    ),
    (
        "nn-layer-flops",
        "f = nn.Linear(4000, 4000)\nx = torch.ones(1000, 4000)\ny = f(x)",
        "limit",
        "floating-point operations",
    ),
    (
        "nn-attention-bomb",
        "m = nn.MultiheadAttention(64, 1)\nq = torch.ones(8000, 1, 64)\no = m(q, q, q)",
        "limit",
        "would allocate",
    ),
    (
        "optim-huge-params",
        "".join(f"p{i} = torch.zeros(20_000_000, requires_grad=True)\n" for i in range(3))
        + "opt = optim.Adam([p0, p1, p2])",
        "limit",
        "of state",
    ),
    ("optim-closure", OPT + "opt.step(print)", "type", "no closure"),
    ("optim-param-groups", OPT + "g = opt.param_groups", "type", "no attribute"),
    ("optim-state-dict", OPT + "s = opt.state_dict()", "type", "no method"),
    (
        "optim-differentiable",
        NET + "opt = optim.SGD(net.parameters(), lr=0.1, differentiable=True)",
        "type",
        "no argument",
    ),
    (
        "dataloader-num-workers-context",
        DS + LOADER + "(ds, num_workers=4, multiprocessing_context='fork')",
        "type",
        "no argument",
    ),
    (
        "dataloader-num-workers-negative",
        DS + LOADER + "(ds, num_workers=-1)",
        "runtime",
        "non-negative",
    ),
    ("dataloader-num-workers-text", DS + LOADER + "(ds, num_workers='4')", "type", "integer"),
    (
        "dataloader-collate-builtin",
        DS + LOADER + "(ds, collate_fn=print)",
        "forbidden",
        "collate_fn",
    ),
    ("dataloader-sampler-builtin", DS + LOADER + "(ds, sampler=print)", "forbidden", "sampler"),
    ("dataloader-worker-init", DS + LOADER + "(ds, worker_init_fn=print)", "forbidden", "workers"),
    (
        "dataloader-context",
        DS + LOADER + "(ds, multiprocessing_context='fork')",
        "type",
        "no argument",
    ),
]

# Aimed at what the language grew: functions, lambdas, loops, comprehensions, containers,
# strings, imports. Every one is refused with its line and column.
FUNCTIONS = [
    ("recursion-bomb", "def f(n):\n    return f(n + 1)\nf(0)", "limit", "call depth"),
    (
        "mutual-recursion",
        "def a(n):\n    return b(n)\ndef b(n):\n    return a(n)\na(1)",
        "limit",
        "call depth",
    ),
    ("lambda-recursion", "f = lambda n: f(n + 1)\nf(0)", "limit", "call depth"),
    (
        "recursion-with-tensors",
        "def f(t):\n    return f(t * 2)\nf(torch.ones(2))",
        "limit",
        "call depth",
    ),
    (
        "recursion-in-comprehensions",
        "def f(n):\n    return [f(n + 1) for i in [1] if all(j for j in [1])]\nf(0)",
        "limit",
        "call depth",
    ),
    ("lambda-closure", "c = (lambda: 0).__closure__", "forbidden", UNDERSCORE),
    ("function-globals", "def f():\n    pass\ng = f.__globals__", "forbidden", UNDERSCORE),
    (
        "function-defaults-dunder",
        "def f(a=1):\n    pass\nd = f.__defaults__",
        "forbidden",
        UNDERSCORE,
    ),
    ("function-func-globals", "def f():\n    pass\ng = f.func_globals", "forbidden", "machinery"),
    ("function-attribute", "def f():\n    pass\nn = f.name", "type", "no attribute"),
    (
        "generator-frame-back",
        "g = (i for i in [1])\nb = g.gi_frame.f_back",
        "forbidden",
        "generator",
    ),
    ("generator-code", "g = (i for i in [1])\nc = g.gi_code", "forbidden", "generator"),
    # next() and iter() take only the program's own objects (a loader, a layer's parameters,
    # a generator: the interpreter's own, with no methods)
    ("generator-send", "g = (i for i in [1])\nn = g.send(None)", "type", "no method `.send`"),
    ("iter-of-a-list", "i = iter(5)", "type", "loop over it with `for`"),
    ("yield-in-lambda", "f = lambda: (yield)", "forbidden", "inside a lambda"),
    ("decorator", "@print\ndef f():\n    pass", "forbidden", "this decorator is not part"),
    ("default-builtin", "def f(p=print):\n    return p\nf()('x')", "type", "cannot hold"),
    ("default-module", "def f(m=torch):\n    return m", "type", "cannot hold"),
    ("lambda-default-namespace", "f = lambda t=torch.nn: t", "type", "cannot hold"),
    ("list-holding-builtin", "l = [print]\nl[0]('x')", "type", "cannot hold"),
    ("dict-holding-module", "d = {'t': torch}", "type", "cannot hold"),
    ("return-builtin", "def f():\n    return len\ng = f()", "type", "cannot hold"),
    ("global", "def f():\n    global F\n    F = 2", "forbidden", "built-in name"),
    ("nonlocal", "x = 1\ndef f():\n    nonlocal x\n    x = 2", "syntax", "no binding for nonlocal"),
    (
        "computed-attribute-name",
        X + 'name = "gr" + "ad"\ny = getattr(x, name)',
        "name",
        "not defined",
    ),
    (
        "computed-dunder-call",
        X + 'n = "__class__"\ny = x.__getattribute__(n)',
        "forbidden",
        UNDERSCORE,
    ),
    ("vars-subscript", X + 'y = vars(x)["grad"]', "name", "not defined"),
    ("isinstance-type", "t = isinstance(1, type)", "name", "not defined"),
    ("isinstance-builtin", "t = isinstance(1, print)", "type", "isinstance"),
    ("sorted-key-getattr", "s = sorted([3, 1], key=getattr)", "name", "not defined"),
    ("class-nn-module-attribute", "class A(torch.nn.Module):\n    x = 1", "forbidden", "class"),
    (
        "class-in-function",
        "def f():\n    class A:\n        pass\n    return A",
        "forbidden",
        "classes",
    ),
    (
        "try-in-function",
        "def f():\n    try:\n        return 1 / 0\n    except Exception as e:\n        return e.__context__",
        "forbidden",
        UNDERSCORE,
    ),
    ("import-in-function", "def f():\n    import os\n    return os", "forbidden", "imports"),
    ("import-torch-hub", "import torch.hub as hub", "forbidden", "not available"),
    ("from-torch-import-load", "from torch import load", "name", "cannot write files"),
    ("import-builtins", "import builtins", "forbidden", "not available"),
    ("import-importlib", "import importlib", "forbidden", "not available"),
    ("import-alias-shadows-F", "import torch.nn as F", "forbidden", "cannot name"),
    ("module-from-import", "import torch.nn as nn\nm = nn", "type", "module"),
    ("assert-message-reaches-load", 'assert False, torch.load("x")', "name", "not available"),
    ("walrus-in-comprehension", "l = [(y := 1) for i in [1]]", "forbidden", "walrus"),
]

LOOPS = [
    ("while-true", "while True:\n    pass", "limit", "loop iterations"),
    ("while-true-counter", "i = 0\nwhile True:\n    i = i + 1", "limit", "loop iterations"),
    ("for-huge-range", "for i in range(10**12):\n    pass", "limit", "would run"),
    (
        "nested-loops",
        "for i in range(1000):\n    for j in range(1000):\n        pass",
        "limit",
        "loop iterations",
    ),
    ("list-of-huge-range", "l = list(range(10**9))", "limit", "would run"),
    ("sum-of-huge-range", "s = sum(range(10**10))", "limit", "would run"),
    ("map-huge-range", "m = map(abs, range(10**9))", "limit", "would run"),
    ("comprehension-huge", "l = [0 for i in range(10**9)]", "limit", "would run"),
    (
        "nested-comprehension",
        "l = [[0] * 10**4 for i in range(10**4)]",
        "limit",
        "items in all",
    ),
    (
        "nested-generators",
        "s = sum(sum(1 for j in range(10**5)) for i in range(10**5))",
        "limit",
        "loop iterations",
    ),
    (
        "enumerate-huge-range",
        "for i, v in enumerate(range(10**9)):\n    pass",
        "limit",
        "would run",
    ),
    ("huge-range-integer", "r = range(10**5000)", "limit", "bits"),
    (
        "loop-appends-itself",
        "l = []\nfor x in l + [0]:\n    l.append(l)\nwhile True:\n    l.append(l)",
        "limit",
        "items per list",
    ),
    (
        "list-grows-while-read",
        "l = [0]\nfor x in l:\n    l.append(x)",
        "limit",
        "items per list",
    ),
    (
        "dict-bomb",
        "d = {}\ni = 0\nwhile True:\n    d[i] = i\n    i += 1",
        "limit",
        "items per list",
    ),
    ("list-doubling", "l = [0]\nwhile True:\n    l = l + l", "limit", "items per list"),
    ("string-doubling", "s = 'a'\nwhile True:\n    s = s + s", "limit", "characters per string"),
    ("string-in-fstring", "s = f\"{'a' * 10**6}\"", "limit", "characters per string"),
    ("fstring-precision", 's = f"{1.0:.1000000000f}"', "limit", "format precision"),
    ("fstring-spec-traversal", "x = 1\ns = f\"{x:{'{0.__class__}'}}\"", "type", "format spec"),
    ("str-join-bomb", "s = 'a' * 10000\nt = s.join([s] * 10000)", "limit", "characters per string"),
    (
        "str-replace-bomb",
        "s = 'a' * 10000\nt = s.replace('a', s)",
        "limit",
        "characters per string",
    ),
    ("str-zfill", "s = '1'.zfill(10**9)", "limit", "characters per string"),
    (
        "percent-pieces-bomb",
        "s = 'a' * 100000\nt = '%s' * 50000\nu = t % ((s,) * 50000)",
        "limit",
        "characters per string",
    ),
    ("fstring-pieces-bomb", "s = 'a' * 99999\nu = f'{s}{s}{s}{s}{s}{s}{s}{s}'", "limit", "string"),
    ("str-format-method", "s = '{0.__class__}'.format(1)", "forbidden", "format field"),
    ("repr-of-many-tensors", "l = [torch.ones(1)] * 10000\ns = f'{l}'", "limit", "string"),
    ("str-of-nested-list", "l = [0] * 10000\nm = [l] * 10000\ns = str(m)", "limit", "string"),
    ("int-from-long-string", "n = int('9' * 5000)", "limit", "bits"),
    # nested values that torch, hashing or comparison would read in full, in C
    (
        "deep-list-to-torch",
        "a = []\nfor i in range(1000):\n    a = [a]\nb = torch.tensor(a)",
        "limit",
        "64 deep",
    ),
    ("self-holding-list-to-torch", "a = []\na.append(a)\nx = torch.tensor(a)", "limit", "in full"),
    (
        "doubling-list-to-torch",
        "a = [1.0]\nfor i in range(40):\n    a = [a, a]\nx = torch.tensor(a)",
        "limit",
        "in full",
    ),
    (
        "deep-tuple-key",
        "t = ()\nfor i in range(1000):\n    t = (t,)\nd = {t: 1}",
        "limit",
        "64 deep",
    ),
    (
        "doubling-tuple-hash",
        "t = (1,)\nfor i in range(40):\n    t = (t, t)\nd = {t: 1}",
        "limit",
        "in full",
    ),
    (
        "doubling-list-compare",
        "a = [1]\nb = [1]\nfor i in range(40):\n    a = [a, a]\n    b = [b, b]\nx = a == b",
        "limit",
        "in full",
    ),
    ("range-to-torch", "x = torch.tensor(range(10**9))", "limit", "in full"),
    (
        "deep-list-index",
        "x = torch.ones(3)\ni = [0]\nfor k in range(100):\n    i = [i]\ny = x[i]",
        "limit",
        "64 deep",
    ),
    ("pow-builtin", "n = pow(9, 10**6)", "limit", "bits"),
]

CLASSES = [
    (
        "class-getattr",
        "class N(nn.Module):\n    def __getattr__(self, n):\n        return 1",
        "forbidden",
        "underscore",
    ),
    (
        "class-getattribute",
        "class N(nn.Module):\n    def __getattribute__(self, n):\n        return 1",
        "forbidden",
        "underscore",
    ),
    (
        "class-init-subclass",
        "class N(nn.Module):\n    def __init_subclass__(cls):\n        pass",
        "forbidden",
        "underscore",
    ),
    (
        "class-class-getitem",
        "class N(nn.Module):\n    def __class_getitem__(cls, k):\n        pass",
        "forbidden",
        "underscore",
    ),
    (
        "class-private-method",
        "class N(nn.Module):\n    def __hidden(self):\n        pass",
        "forbidden",
        "underscore",
    ),
    ("class-metaclass", "class N(nn.Module, metaclass=type):\n    pass", "forbidden", "metaclass"),
    ("class-decorator", "@print\nclass N(nn.Module):\n    pass", "forbidden", "decorators"),
    (
        "class-method-decorator",
        "class N(nn.Module):\n    @print\n    def f(x):\n        return x",
        "forbidden",
        "this decorator is not part",
    ),
    ("class-object-base", "class N(torch.Tensor):\n    pass", "forbidden", "classes"),
    ("class-int-base", "class N(int):\n    pass", "forbidden", "classes"),
    ("class-two-bases", "class N(nn.Module, nn.Linear):\n    pass", "forbidden", "one base"),
    ("class-attribute-builtin", "class N(nn.Module):\n    p = print", "forbidden", "methods"),
    (
        "class-self-dict",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n        d = self.__dict__",
        "forbidden",
        "underscore",
    ),
    (
        "class-self-modules",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n        d = self._modules",
        "forbidden",
        "underscore",
    ),
    (
        "class-type-self",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n        t = type(self)\nn = N()",
        "name",
        "not defined",
    ),
    (
        "class-super-odd-args",
        "class N(nn.Module):\n    def __init__(self):\n        super(int, self).__init__()",
        "forbidden",
        "super",
    ),
    (
        "class-super-method",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n        super().__getattribute__('_modules')",
        "forbidden",
        "underscore",
    ),
    ("class-super-outside", "s = super()", "forbidden", "super"),
    ("nn-parameter-of-a-number", "w = nn.Parameter(3)", "type", "wraps a tensor"),
    ("nn-parameter-of-a-module", "w = nn.Parameter(nn.Linear(2, 2))", "type", "wraps a tensor"),
    ("nn-parameter-of-a-string", 'w = nn.Parameter("__class__")', "type", "wraps a tensor"),
    (
        "nn-parameter-in-a-class-of-a-list",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = nn.Parameter([1.0])\nn = N()",
        "type",
        "wraps a tensor",
    ),
    (
        "class-forward-globals",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n    def forward(self, x):\n        return self.forward.__globals__",
        "forbidden",
        "underscore",
    ),
    (
        "class-forward-recursion",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n    def forward(self, x):\n        return self(x)\nn = N()\ny = n(1)",
        "limit",
        "deep",
    ),
    (
        "class-holds-itself",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.me = self\nn = N()",
        "type",
        "itself",
    ),
    (
        "class-giant-layer",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(100000, 100000)\nn = N()",
        "limit",
        "parameters",
    ),
    (
        "class-forward-hook",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\nn = N()\nn.register_forward_hook(print)",
        "name",
        "hooks",
    ),
    (
        "class-module-in-function",
        "def f():\n    class A(nn.Module):\n        pass\n    return A",
        "forbidden",
        "top level",
    ),
    (
        "class-in-class",
        "class N(nn.Module):\n    class M(nn.Module):\n        pass",
        "forbidden",
        "methods",
    ),
    (
        "class-many",
        "class C0(nn.Module):\n    pass\nclass C1(nn.Module):\n    pass\nclass C2(nn.Module):\n    pass\nclass C3(nn.Module):\n    pass\nclass C4(nn.Module):\n    pass\nclass C5(nn.Module):\n    pass\nclass C6(nn.Module):\n    pass\nclass C7(nn.Module):\n    pass\nclass C8(nn.Module):\n    pass\nclass C9(nn.Module):\n    pass\nclass C10(nn.Module):\n    pass\nclass C11(nn.Module):\n    pass\nclass C12(nn.Module):\n    pass\nclass C13(nn.Module):\n    pass\nclass C14(nn.Module):\n    pass\nclass C15(nn.Module):\n    pass\nclass C16(nn.Module):\n    pass\nclass C17(nn.Module):\n    pass\nclass C18(nn.Module):\n    pass\nclass C19(nn.Module):\n    pass\nclass C20(nn.Module):\n    pass\nclass C21(nn.Module):\n    pass\nclass C22(nn.Module):\n    pass\nclass C23(nn.Module):\n    pass\nclass C24(nn.Module):\n    pass\n",
        "limit",
        "classes",
    ),
    (
        "class-layer-before-super",
        "class N(nn.Module):\n    def __init__(self):\n        self.fc = nn.Linear(2, 2)\n        super().__init__()\nn = N()",
        "type",
        "before Module.__init__",
    ),
    (
        "class-no-super",
        "class N(nn.Module):\n    def __init__(self):\n        self.k = 1\nn = N()",
        "type",
        "super().__init__()",
    ),
    (
        "class-method-shadows-module",
        "class N(nn.Module):\n    def parameters(self):\n        return []\nn = N()",
        "forbidden",
        "replace",
    ),
    (
        "class-dunder-call",
        "class N(nn.Module):\n    def __call__(self, x):\n        return x",
        "forbidden",
        "underscore",
    ),
    ("class-odd-self-target", "def f(a):\n    a.fc = 1\nf(3)\n", "type", "t.grad"),
]

HOSTILE = (
    ESCAPES + REFLECTION + FORMAT + TORCH_IO + GLOBAL_STATE + MEMORY + CPU + OBJECTS + PARSER
    + ODD_TEXT
    + FUNCTIONS + LOOPS + LAYERS + CLASSES
)  # fmt: skip

CLOCKS = [
    ("sleep-bomb", "import time\ntime.sleep(10 ** 9)", "runtime", "at most 1 s a call"),
    ("sleep-inf", "import time\ntime.sleep(float('inf'))", "runtime", "at most 1 s a call"),
    ("sleep-nan", "import time\ntime.sleep(float('nan'))", "runtime", "not NaN"),
    ("sleep-not-a-number", "import time\ntime.sleep('1')", "runtime", "number of seconds"),
    ("time-internals", "import time\nd = time.__dict__", "forbidden", "__dict__"),
    ("time-unlisted", "import time\ntime.process_time_ns()", "name", "process_time_ns"),
    ("time-from-import", "from time import sleep\nsleep(100)", "runtime", "longer than this app"),
    ("time-rebind", "import time\ntime.sleep = print", "type", "can be assigned"),
]

DECORATORS = [
    ("decorator-builtin", "@len\ndef f():\n    return 1", "forbidden", "this decorator"),
    (
        "decorator-lambda",
        "@(lambda f: print)\ndef f():\n    return 1",
        "forbidden",
        "this decorator",
    ),
    (
        "decorator-class-of-no-grad",
        "@torch.no_grad().__class__\ndef f():\n    return 1",
        "forbidden",
        "this decorator",
    ),
    (
        "decorator-no-grad-argument",
        "@torch.no_grad(print)\ndef f():\n    return 1",
        "forbidden",
        "this decorator",
    ),
    (
        "decorator-stacked-unknown",
        "@torch.no_grad()\n@torch.set_grad_enabled(False)\ndef f():\n    return 1",
        "forbidden",
        "this decorator",
    ),
    (
        "decorator-shadowed-torch",
        "def f():\n    torch = 1\n    @torch.no_grad()\n    def g():\n        return 1\n    return g",
        "forbidden",
        "cannot be reassigned",
    ),
]

SETS = [
    ("set-comprehension-bomb", "s = {i for i in range(10 ** 9)}", "limit", "loop"),
    ("set-of-itself", "s = set()\ns.add(s)", "runtime", "unhashable"),
    ("set-frozenset", "s = frozenset([1])", "name", "frozenset"),
    ("set-dunder-and", "s = {1}\nt = s.__iand__({1})", "forbidden", "underscore"),
    ("set-or-list", "s = {1} | [2]", "type", "not on a set"),
    (
        "mask-broadcast-bomb",
        "a = torch.ones(100000, 1, dtype=torch.bool)\n"
        "b = torch.ones(1, 100000, dtype=torch.bool)\nc = a | b",
        "limit",
        "",
    ),
    (
        "set-update-many",
        "s = set()\nfor i in range(20):\n    s.update(range(i * 10000, (i + 1) * 10000))",
        "limit",
        "items",
    ),
    ("set-print-huge", "s = set(range(60000))\nt = str(s) + str(s)", "limit", "characters"),
]

RAISES = [
    ("raise-base-exception", "raise BaseException('x')", "forbidden", "raise ValueError"),
    ("raise-keyboard-interrupt", "raise KeyboardInterrupt", "forbidden", "raise ValueError"),
    ("raise-generator-exit", "raise GeneratorExit", "forbidden", "raise ValueError"),
    (
        "raise-from-cause",
        "raise ValueError('a') from ValueError('b')",
        "forbidden",
        "raise ValueError",
    ),
    ("raise-instance-name", "e = 1\nraise e", "forbidden", "raise ValueError"),
    ("raise-attribute", "raise torch.cuda.OutOfMemoryError('x')", "forbidden", "raise ValueError"),
    ("raise-huge-message", "raise ValueError('x' * 10 ** 9)", "limit", ""),
    (
        "raise-recursive-message",
        "a = []\na.append(a)\nraise ValueError(a)",
        "runtime",
        "ValueError",
    ),
]

KEPT_FUNCTIONS = [
    ("kept-function-dunder", "f = torch.zeros\ng = f.__wrapped__", "forbidden", "underscore"),
    ("kept-function-target", "f = torch.zeros\ng = f.member", "type", "no attribute"),
    ("kept-function-bomb", "f = torch.ones\nt = f(100000, 100000)", "limit", "would allocate"),
    ("kept-class-bomb", "L = nn.Linear\nm = L(100000, 100000)", "limit", ""),
    ("kept-load", "f = torch.load", "name", "torch.load"),
    ("kept-marker", "f = torch.no_grad\nwith f():\n    pass", "forbidden", "`with` works with"),
]

RANDOM = [
    (
        "random-sample-bomb",
        "import random\nx = random.sample(list(range(90000)), 10 ** 9)",
        "runtime",
        "items per list",
    ),
    ("random-instance", "import random\nr = random.Random()", "name", "random.Random"),
    ("random-system", "import random\nr = random.SystemRandom()", "name", "SystemRandom"),
    ("random-state", "import random\nrandom.setstate(None)", "name", "setstate"),
    ("random-private", "import random\nr = random._urandom(10)", "forbidden", "underscore"),
    (
        "random-seed-object",
        "import random\nrandom.seed(torch.ones(10 ** 4))",
        "runtime",
        "int, a float or a str",
    ),
    ("random-shuffle-dict", "import random\nd = {1: 2}\nrandom.shuffle(d)", "runtime", "in place"),
]

DATA_UPDATES = [
    ("data-update-dunder", "x = torch.ones(2)\nx.__dict__.data += 1", "forbidden", "underscore"),
    (
        "data-update-bomb",
        "x = torch.ones(2)\nx.data += torch.ones(10 ** 5, 10 ** 5)",
        "limit",
        "would allocate",
    ),
    (
        "data-update-broadcast",
        "x = torch.ones(1)\nx.data += torch.ones(3000, 3000)",
        "runtime",
        "output with shape",
    ),
    ("data-update-module", "x = torch\nx.data += 1", "type", "module"),
    ("grad-update", "x = torch.ones(2)\nx.grad += 1", "type", "works on `t.data`"),
]

TENSOR_IN_TENSOR = [
    (
        "tensor-in-tensor-broadcast",
        "a = torch.zeros(30000, 1)\nb = torch.zeros(1, 30000)\nf = a in b",
        "limit",
        "would allocate",
    ),
]

AUTOGRAD = [
    ("autograd-forward-ad", "j = torch.autograd.forward_ad", "name", "not available"),
    ("autograd-function-class", "F2 = torch.autograd.Function", "name", "not available"),
    ("autograd-grad-mode", "m = torch.autograd.grad_mode", "name", "not available"),
    ("autograd-grad-attr", "g = torch.autograd.grad.__wrapped__", "forbidden", "underscore"),
    (
        "autograd-grad-huge-output",
        "x = torch.ones(2, requires_grad=True)\ng = torch.autograd.grad(x.sum(), x, grad_outputs=torch.ones(10 ** 5, 10 ** 5))",
        "limit",
        "would allocate",
    ),
]

# `try`: the run's caps, the language's refusals and its own errors are never caught, a
# `finally` never outlives a cap, and an exception gives nothing of Python's machinery.
TRY_EXCEPT = [
    (
        "try-except-loop-cap",
        "n = 0\nwhile True:\n    try:\n        n += 1\n    except:\n        pass\n",
        "limit",
        "loop iterations",
    ),
    (
        "try-except-statements-cap",
        "for i in range(190000):\n    try:\n        a = 1\n        b = 2\n"
        "    except Exception:\n        pass\n",
        "limit",
        "",
    ),
    (
        "try-except-memory-cap",
        "xs = []\ntry:\n    while True:\n        xs.append(torch.ones(1000, 1000))\n"
        "except Exception:\n    print('kept going')\n",
        "limit",
        "",
    ),
    (
        "try-except-allocation",
        "try:\n    t = torch.ones(100000, 100000)\nexcept RuntimeError:\n    t = 1\n",
        "limit",
        "allocate",
    ),
    (
        "try-except-recursion",
        "def f(n):\n    try:\n        return f(n + 1)\n    except:\n        return n\nr = f(0)\n",
        "limit",
        "call depth",
    ),
    (
        "try-except-string-cap",
        "try:\n    s = 'x' * 10 ** 9\nexcept Exception:\n    s = ''\n",
        "limit",
        "characters",
    ),
    (
        "try-finally-forever-after-error",
        "try:\n    raise ValueError('x')\nfinally:\n    while True:\n        pass\n",
        "limit",
        "loop iterations",
    ),
    (
        "try-finally-forever-after-cap",
        "try:\n    while True:\n        pass\nfinally:\n    while True:\n        pass\n",
        "limit",
        "loop iterations",
    ),
    (
        "try-finally-return-after-cap",
        "def f():\n    try:\n        while True:\n            pass\n    finally:\n"
        "        return 1\nr = f()\n",
        "limit",
        "loop iterations",
    ),
    (
        "try-except-traceback",
        "try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__\n",
        "forbidden",
        UNDERSCORE,
    ),
    (
        "try-except-context",
        "try:\n    1 / 0\nexcept Exception as e:\n    c = e.__context__\n",
        "forbidden",
        UNDERSCORE,
    ),
    (
        "try-except-cause",
        "try:\n    1 / 0\nexcept Exception as e:\n    c = e.__cause__\n",
        "forbidden",
        UNDERSCORE,
    ),
    (
        "try-except-with-traceback",
        "try:\n    1 / 0\nexcept Exception as e:\n    c = e.with_traceback(None)\n",
        "type",
        "with_traceback",
    ),
    (
        "try-except-args",
        "try:\n    raise ValueError(torch.ones(2))\nexcept ValueError as e:\n    a = e.args\n",
        "type",
        "args",
    ),
    (
        "try-except-base-exception",
        "try:\n    pass\nexcept BaseException:\n    pass\n",
        "forbidden",
        "except ValueError",
    ),
    (
        "try-except-system-exit",
        "try:\n    pass\nexcept SystemExit:\n    pass\n",
        "forbidden",
        "except ValueError",
    ),
    (
        "try-except-keyboard-interrupt",
        "try:\n    pass\nexcept (ValueError, KeyboardInterrupt):\n    pass\n",
        "forbidden",
        "except ValueError",
    ),
    (
        "try-except-memory-error",
        "try:\n    pass\nexcept MemoryError:\n    pass\n",
        "forbidden",
        "except ValueError",
    ),
    (
        "try-except-torch-class",
        "try:\n    pass\nexcept torch.cuda.OutOfMemoryError:\n    pass\n",
        "forbidden",
        "except ValueError",
    ),
    (
        "try-except-raise-system-exit",
        "try:\n    1 / 0\nexcept ZeroDivisionError:\n    raise SystemExit(0)\n",
        "forbidden",
        "raise ValueError",
    ),
    (
        "try-except-raise-caught",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    raise e\n",
        "forbidden",
        "raise ValueError",
    ),
    (
        "try-except-refusal",
        "try:\n    c = torch._C\nexcept:\n    c = None\n",
        "forbidden",
        UNDERSCORE,
    ),
    (
        "try-except-import",
        "try:\n    import os\nexcept Exception:\n    os = None\n",
        "forbidden",
        "not available",
    ),
    (
        "try-except-name",
        "try:\n    eval('1')\nexcept Exception:\n    pass\n",
        "name",
        "not defined",
    ),
    (
        "try-except-missing-attribute",
        "try:\n    t = torch.ones(2).storage()\nexcept Exception:\n    t = None\n",
        "name",
        "",
    ),
    (
        "try-except-star",
        "try:\n    pass\nexcept* ValueError:\n    pass\n",
        "forbidden",
        "except*",
    ),
    (
        "try-bare-raise-outside",
        "raise\n",
        "syntax",
        "bare `raise`",
    ),
    (
        "try-bare-raise-in-nested-def",
        "try:\n    1 / 0\nexcept ZeroDivisionError:\n    def f():\n        raise\n",
        "syntax",
        "bare `raise`",
    ),
    (
        "try-except-dunder-name",
        "try:\n    1 / 0\nexcept Exception as __builtins__:\n    pass\n",
        "forbidden",
        UNDERSCORE,
    ),
    (
        "try-except-as-torch",
        "try:\n    1 / 0\nexcept Exception as torch:\n    pass\n",
        "forbidden",
        "torch",
    ),
]

H = X + "y = x * 2\n"  # a tensor with a grad_fn, for the hooks and nodes below
AUTOGRAD_API = [
    ("grad-fn-node-hook", H + "h = y.grad_fn.register_hook(print)", "type", "no method"),
    ("grad-fn-prehook", H + "h = y.grad_fn.register_prehook(print)", "type", "no method"),
    ("grad-fn-dunder-call", H + "c = y.grad_fn.__call__", "forbidden", UNDERSCORE),
    ("grad-fn-call", H + "f = y.grad_fn\ng = f(torch.ones(3))", "type", "cannot be called"),
    ("grad-fn-apply", H + "g = y.grad_fn.apply(torch.ones(3))", "type", "no method"),
    ("grad-fn-metadata-dict", H + "m = y.grad_fn.metadata", "type", "no attribute"),
    (
        "grad-fn-next-class",
        H + "c = y.grad_fn.next_functions[0][0].__class__",
        "forbidden",
        UNDERSCORE,
    ),
    ("grad-fn-raw-saved", H + "r = y.grad_fn._raw_saved_self", "forbidden", UNDERSCORE),
    ("grad-fn-saved-assign", H + "y.grad_fn._saved_self = x", "forbidden", "assigned"),
    ("grad-fn-saved-on-tensor", H + "s = x._saved_self", "name", "no attribute"),
    (
        "hook-returns-huge",
        H + "h = y.register_hook(lambda g: torch.ones(10 ** 5, 10 ** 5))\ny.sum().backward()",
        "limit",
        "would allocate",
    ),
    (
        "hook-returns-wrong-shape",
        H + "h = y.register_hook(lambda g: torch.ones(5))\ny.sum().backward()",
        "runtime",
        "keep the shape",
    ),
    (
        "hook-returns-a-number",
        H + "h = y.register_hook(lambda g: 5)\ny.sum().backward()",
        "type",
        "returned a int",
    ),
    (
        "hook-returns-a-layer",
        H + "h = y.register_hook(lambda g: nn.Linear(2, 2))\ny.sum().backward()",
        "type",
        "returned a",
    ),
    (
        "hook-reenters-backward",
        H + "def h(g):\n    y.sum().backward()\ny.register_hook(h)\ny.sum().backward()",
        "forbidden",
        "inside a hook",
    ),
    (
        "hook-reenters-autograd-grad",
        H + "def h(g):\n    return torch.autograd.grad(y.sum(), x)[0]\n"
        "y.register_hook(h)\ny.sum().backward()",
        "forbidden",
        "inside a hook",
    ),
    (
        "hook-loops-forever",
        H + "def h(g):\n    while True:\n        pass\ny.register_hook(h)\ny.sum().backward()",
        "limit",
        "loop iterations",
    ),
    (
        "hook-registered-thousands-of-times",
        H + "for i in range(5000):\n    y.register_hook(lambda g: g)",
        "limit",
        "hooks",
    ),
    (
        "hook-changes-its-gradient-in-place",
        H + "def h(g):\n    g.mul_(1000)\ny.register_hook(h)\n(y * y).sum().backward()",
        "type",
        "in place",
    ),
    (
        "hook-registers-hooks",
        H + "def h(g):\n    x.register_hook(h)\ny.register_hook(h)\ny.sum().backward()",
        "forbidden",
        "cannot register hooks",
    ),
    (
        "hook-changes-its-gradient-through-data",
        H + "def h(g):\n    g.data.mul_(1000)\ny.register_hook(h)\n(y * y).sum().backward()",
        "forbidden",
        ".data",
    ),
    ("hook-not-a-function", H + "y.register_hook(torch.nn)", "type", "takes a function"),
    ("hook-python-print", X + "x.register_hook(print, 1)", "type", "one function"),
    ("tensor-class-huge-sizes", "t = torch.Tensor(10 ** 6, 10 ** 6)", "limit", "would allocate"),
    (
        "tensor-class-huge-rank",
        "t = torch.Tensor(1000, 1000, 1000, 1000, 1000, 1000)",
        "limit",
        "would allocate",
    ),
    (
        "tensor-class-huge-list",
        "t = torch.Tensor([[0.0] * 10 ** 4] * 10 ** 4)",
        "limit",
        "items",
    ),
    ("tensor-class-keeps-a-tensor", X + "t = torch.Tensor(x)", "type", "not tensor"),
    (
        "lazy-linear-huge-first-call",
        "l = nn.LazyLinear(100000)\ny = l(torch.ones(1, 100000))",
        "limit",
        "parameters",
    ),
    (
        "lazy-linear-sized-by-a-state-dict",
        "a = nn.Linear(1000, 1000)\nls = [nn.LazyLinear(1000) for i in range(100)]\n"
        "for l in ls:\n    l.load_state_dict(a.state_dict())",
        "type",
        "lazy layers",
    ),
    (
        "lazy-conv-huge-first-call",
        "c = nn.LazyConv2d(4096, 50)\ny = c(torch.ones(1, 64, 50, 50))",
        "limit",
        "parameters",
    ),
]

# The surface the language grew: `*` and `**` in calls, displays, parameters and targets,
# `del`, `global` and `nonlocal`, `str.format`. Each is refused with its kind, words and
# (line, column) (tests/security/test_corpus.py checks the position too).
GREW = [
    (
        "grew-kwargs-dunder-key",
        "f = lambda **k: k\nf(**{'__class__': 1})",
        "forbidden",
        "underscore",
        (2, 3),
    ),
    (
        "grew-kwargs-dunder-to-torch",
        "y = torch.ones(2, **{'__self__': 1})",
        "forbidden",
        "underscore",
        (1, 19),
    ),
    (
        "grew-kwargs-dunder-from-a-dict",
        "d = {'__class__': 1}\nprint(**d)",
        "forbidden",
        "underscore",
        (2, 7),
    ),
    ("grew-kwargs-out", X + "y = torch.add(x, x, **{'out': x})", "forbidden", "out=", (2, 21)),
    (
        "grew-kwargs-param-private",
        "def f(**__kw):\n    return __kw",
        "forbidden",
        "underscore",
        (1, 9),
    ),
    ("grew-kwargs-of-a-module", "print(**torch)", "type", "must be a mapping", (1, 7)),
    ("grew-star-of-a-module", "print(*torch)", "type", "must be an iterable", (1, 7)),
    ("grew-star-huge-range", "print(*range(10**12))", "limit", "items", (1, 7)),
    ("grew-star-huge-range-display", "y = [*range(10**12)]", "limit", "items", (1, 6)),
    (
        "grew-star-huge-tensor-rows",
        "t = torch.zeros(10**6, 1)\nprint(*t)",
        "limit",
        "items",
        (2, 7),
    ),
    ("grew-star-target-huge", "a, *b = range(10**12)", "limit", "items", (1, 1)),
    ("grew-star-doubling", "xs = [0] * 60000\ny = [*xs, *xs]", "limit", "120,000 items", (2, 11)),
    (
        "grew-star-recursion-doubling",
        "def f(*a):\n    return f(*a, *a)\nf(1)",
        "limit",
        "items",
        (2, 18),
    ),
    (
        "grew-kwargs-recursion",
        "def f(**k):\n    return f(**k, **{})\nf()",
        "limit",
        "call depth",
        (2, 12),
    ),
    (
        "grew-star-shape-huge",
        "shape = [100000, 100000]\nx = torch.randn(*shape)",
        "limit",
        "would allocate",
        (2, 5),
    ),
    (
        "grew-kwargs-size-huge",
        "x = torch.ones(**{'size': (10**6, 10**6)})",
        "limit",
        "would allocate",
        (1, 5),
    ),
    (
        "grew-format-huge-field-number",
        "s = '{' + '9' * 5000 + '}'\nt = s.format(1)",
        "runtime",
        "too many decimal digits",
        (2, 5),
    ),
    (
        "grew-star-generator-frame",
        "print(*(i for i in [1]).gi_frame)",
        "forbidden",
        "machinery",
        (1, 8),
    ),
    (
        "grew-format-globals",
        "def f():\n    pass\ns = '{0.__globals__}'.format(f)",
        "forbidden",
        "format field",
        (3, 5),
    ),
    (
        "grew-format-class-chain",
        "s = '{0.__class__.__mro__}'.format(1)",
        "forbidden",
        "format field",
        (1, 5),
    ),
    (
        "grew-format-index-then-attr",
        "s = '{0[0].__class__}'.format([1])",
        "forbidden",
        "format field",
        (1, 5),
    ),
    (
        "grew-format-keyword-attr",
        X + "s = '{t.grad_fn}'.format(t=x)",
        "forbidden",
        "format field",
        (2, 5),
    ),
    (
        "grew-format-tensor-index",
        X + "s = '{0[0]}'.format(x)",
        "type",
        "lists, tuples and dicts",
        (2, 5),
    ),
    (
        "grew-format-width-nested",
        "s = '{:{w}}'.format(1, w=10**9)",
        "limit",
        "format width",
        (1, 5),
    ),
    ("grew-format-recursion", "s = '{:{:{}}}'.format(1, 2, 3)", "runtime", "recursion", (1, 5)),
    (
        "grew-format-huge-output",
        "s = 'a' * 90000\nt = '{}{}'.format(s, s)",
        "limit",
        "characters",
        (2, 5),
    ),
    (
        "grew-global-builtins",
        "def f():\n    global __builtins__\n    return 1",
        "forbidden",
        "underscore",
        (2, 5),
    ),
    (
        "grew-global-torch",
        "def f():\n    global torch\n    torch = 1",
        "forbidden",
        "built-in name",
        (2, 5),
    ),
    (
        "grew-global-print",
        "def f():\n    global print\n    print = 1",
        "forbidden",
        "built-in name",
        (2, 5),
    ),
    (
        "grew-nonlocal-private",
        "def f():\n    x = 1\n    def g():\n        nonlocal __x\n",
        "forbidden",
        "underscore",
        (4, 9),
    ),
    ("grew-nonlocal-top", "nonlocal torch", "forbidden", "built-in name", (1, 1)),
    ("grew-del-torch", "del torch", "forbidden", "cannot be deleted", (1, 5)),
    ("grew-del-print", "del print", "forbidden", "cannot be deleted", (1, 5)),
    ("grew-del-namespace-member", "del torch.nn", "forbidden", "`del` takes a name", (1, 5)),
    ("grew-del-tensor-attr", X + "del x.grad", "forbidden", "`del` takes a name", (2, 5)),
    ("grew-del-tensor-item", X + "del x[0]", "type", "item deletion", (2, 5)),
    ("grew-del-private", "del __builtins__", "forbidden", "underscore", (1, 5)),
]

# Plain classes, dataclasses and a program's own datasets: no dunder reaches Python's class
# machinery, no metaclass or other decorator, recursion and loops inside dunder methods stop
# at the caps (each with its line and column).
PLAIN_CLASSES = [
    (
        "plain-dunder-class",
        "class A:\n    pass\na = A()\nb = a.__class__",
        "forbidden",
        "underscore",
        (4, 5),
    ),
    (
        "plain-bases-chain",
        "class A:\n    pass\nb = A.__class__.__bases__",
        "forbidden",
        "underscore",
        (3, 5),
    ),
    (
        "plain-dict-write",
        "class A:\n    pass\na = A()\na.__dict__ = {}",
        "forbidden",
        "underscore",
        (4, 1),
    ),
    (
        "plain-dict-item-write",
        "class A:\n    pass\na = A()\na.__dict__['x'] = 1",
        "forbidden",
        "underscore",
        (4, 1),
    ),
    (
        "plain-dataclass-fields",
        DC + "@dataclass\nclass C:\n    x: int = 1\nf = C.__dataclass_fields__",
        "forbidden",
        "underscore",
        (5, 5),
    ),
    (
        "plain-metaclass",
        "class M:\n    pass\nclass A(metaclass=M):\n    pass",
        "forbidden",
        "metaclass",
        (3, 1),
    ),
    (
        "plain-init-subclass",
        "class A:\n    def __init_subclass__(cls):\n        pass",
        "forbidden",
        "underscore",
        (2, 5),
    ),
    (
        "plain-set-name",
        "class A:\n    def __set_name__(self, owner, name):\n        pass",
        "forbidden",
        "underscore",
        (2, 5),
    ),
    (
        "plain-getattribute",
        "class A:\n    def __getattribute__(self, name):\n        return 1",
        "forbidden",
        "underscore",
        (2, 5),
    ),
    (
        "plain-getattr",
        "class A:\n    def __getattr__(self, name):\n        return 1",
        "forbidden",
        "underscore",
        (2, 5),
    ),
    (
        "plain-setattr",
        "class A:\n    def __setattr__(self, name, v):\n        pass",
        "forbidden",
        "underscore",
        (2, 5),
    ),
    (
        "plain-del",
        "class A:\n    def __del__(self):\n        pass",
        "forbidden",
        "underscore",
        (2, 5),
    ),
    (
        "plain-new",
        "class A:\n    def __new__(cls):\n        return 1",
        "forbidden",
        "underscore",
        (2, 5),
    ),
    ("plain-slots", "class A:\n    __slots__ = ('x',)", "forbidden", "underscore", (2, 5)),
    (
        "plain-dunder-call-outside",
        "class A:\n    def __len__(self):\n        return 1\nn = A().__len__()",
        "forbidden",
        "underscore",
        (4, 5),
    ),
    (
        "plain-other-decorator",
        "def deco(c):\n    return c\n@deco\nclass A:\n    pass",
        "forbidden",
        "@dataclass",
        (3, 2),
    ),
    (
        "plain-dataclass-args",
        DC + "@dataclass(frozen=True)\nclass A:\n    x: int = 1",
        "forbidden",
        "@dataclass",
        (2, 2),
    ),
    (
        "plain-fake-dataclass",
        "def dataclass(c):\n    return c\n@dataclass\nclass A:\n    x: int = 1",
        "name",
        "from dataclasses",
        (3, 2),
    ),
    ("plain-annotation-outside", "x: int", "forbidden", "dataclass", (1, 1)),
    ("plain-annotation-plain-class", "class A:\n    x: int = 3", "forbidden", "dataclass", (2, 5)),
    (
        "plain-two-bases",
        "class A:\n    pass\nclass B:\n    pass\nclass C(A, B):\n    pass",
        "forbidden",
        "single inheritance",
        (5, 12),
    ),
    ("plain-base-not-a-class", "def f():\n    pass\nclass A(f):\n    pass", "type", "base", (3, 9)),
    ("plain-type-base", "class A(type):\n    pass", "name", "not defined", (1, 9)),
    (
        "plain-recursive-repr",
        "class A:\n    def __repr__(self):\n        return repr(self)\nprint(A())",
        "limit",
        "call depth",
        (3, 16),
    ),
    (
        "plain-recursive-getitem",
        "class A:\n    def __getitem__(self, i):\n        return self[i]\nx = A()[0]",
        "limit",
        "call depth",
        (3, 16),
    ),
    (
        "plain-repr-not-str",
        "class A:\n    def __repr__(self):\n        return 1\nprint(A())",
        "type",
        "non-string",
        (4, 1),
    ),
    (
        "plain-huge-repr",
        "class A:\n    def __repr__(self):\n        return 'x' * 10**9\nprint(A())",
        "limit",
        "string",
        (3, 16),
    ),
    (
        "plain-getitem-loops-in-loader",
        L
        + "class D:\n    def __len__(self):\n        return 4\n    def __getitem__(self, i):\n        while True:\n            i += 1\nfor b in DataLoader(D(), batch_size=2):\n    pass",
        "limit",
        "loop iterations",
        (6, 9),
    ),
    (
        "plain-huge-len-in-loader",
        L
        + "class D:\n    def __len__(self):\n        return 10**12\n    def __getitem__(self, i):\n        return i\nfor b in DataLoader(D(), batch_size=10**11):\n    pass",
        "limit",
        "limit",
        (7, 10),
    ),
    (
        "plain-huge-shuffle-in-loader",
        L
        + "class D:\n    def __len__(self):\n        return 10**10\n    def __getitem__(self, i):\n        return i\nfor b in DataLoader(D(), shuffle=True):\n    pass",
        "limit",
        "shuffling",
        (7, 10),
    ),
    (
        "plain-loader-batches-objects",
        L
        + "class D:\n    def __len__(self):\n        return 2\n    def __getitem__(self, i):\n        return self\nfor b in DataLoader(D()):\n    pass",
        "type",
        "batches tensors",
        (7, 10),
    ),
    (
        "plain-many-instances",
        "class A:\n    pass\nhead = A()\nwhile True:\n    n = A()\n    n.next = head\n    head = n",
        "limit",
        "statements ran",
        (7, 5),
    ),
    (
        "plain-many-attributes",
        "class A:\n    pass\na = A()\n" + "".join(f"a.x{i} = {i}\n" for i in range(300)),
        "limit",
        "at most 256 attributes",
        (260, 1),
    ),
    (
        "plain-dataclass-huge-default",
        DC + "@dataclass\nclass C:\n    items: list = [0] * 10**9",
        "limit",
        "limit",
        (4, 19),
    ),
    (
        "plain-dataclass-mutable-default",
        DC + "@dataclass\nclass C:\n    items: list = [0]",
        "runtime",
        "mutable default",
        (4, 5),
    ),
    (
        "plain-method-decorator-unknown",
        "def deco(f):\n    return f\nclass A:\n    @deco\n    def f(self):\n        pass",
        "forbidden",
        "decorator",
        (4, 6),
    ),
    ("plain-nested-class", "class A:\n    class B:\n        pass", "forbidden", "methods", (2, 5)),
    (
        "plain-init-returns",
        "class A:\n    def __init__(self):\n        return 1\na = A()",
        "type",
        "should return None",
        (4, 5),
    ),
    (
        "plain-super-outside-init",
        "class A:\n    def f(self):\n        super().__class__",
        "forbidden",
        "super",
        (3, 9),
    ),
    (
        "plain-iter-returns-list",
        "class A:\n    def __iter__(self):\n        return [1, 2]\nfor v in A():\n    pass",
        "type",
        "non-iterator",
        (4, 10),
    ),
    (
        "plain-set-method",
        "class A:\n    def f(self):\n        return 1\na = A()\na.f = 2",
        "type",
        "method",
        (5, 1),
    ),
    ("plain-keep-dataclass", DC + "d = dataclass", "type", "cannot hold", (2, 1)),
    (
        "plain-dataclass-annotation-call",
        DC + "@dataclass\nclass C:\n    x: print('hi') = 1",
        "forbidden",
        "annotation",
        (4, 8),
    ),
]

# Generators (`yield`, `yield from`): the generator is the interpreter's own value, never
# Python's (no frame, code, send, throw or close); a `yield` stands only where the interpreter
# can suspend; endless ones are stopped by the caps, deep ones by the call depth.
GEN_E = "def endless():\n    n = 0\n    while True:\n        yield n\n        n += 1\n"
GEN_G = "def g():\n    yield 1\n"
GENERATORS = [
    (
        "gen-gi-frame",
        GEN_G + "f = g().gi_frame.f_back.f_globals",
        "forbidden",
        "Python's own machinery",
        (3, 5),
    ),
    ("gen-gi-code", GEN_G + "c = g().gi_code", "forbidden", "Python's own machinery", (3, 5)),
    (
        "gen-gi-yieldfrom",
        GEN_G + "it = g()\ny = it.gi_yieldfrom",
        "forbidden",
        "Python's own machinery",
        (4, 5),
    ),
    ("gen-send", GEN_G + "it = g()\nit.send(None)", "type", "no method `.send`", (4, 1)),
    ("gen-throw", GEN_G + "it = g()\nit.throw(1)", "type", "no method `.throw`", (4, 1)),
    ("gen-close", GEN_G + "it = g()\nit.close()", "type", "no method `.close`", (4, 1)),
    (
        "gen-set-attribute",
        GEN_G + "it = g()\nit.gi_frame = 1",
        "forbidden",
        "Python's own machinery",
        (4, 1),
    ),
    (
        "gen-format-field",
        GEN_G + "s = '{0.gi_frame}'.format(g())",
        "forbidden",
        "reads no attributes",
        (3, 5),
    ),
    (
        "gen-fstring-frame",
        GEN_G + "s = f'{g().gi_frame}'",
        "forbidden",
        "Python's own machinery",
        (3, 8),
    ),
    (
        "gen-reads-itself",
        "def me():\n    yield next(it)\nit = me()\nx = next(it)",
        "runtime",
        "already executing",
        (2, 11),
    ),
    (
        "gen-yields-from-itself",
        "def me():\n    yield from it\nit = me()\nx = list(it)",
        "runtime",
        "already executing",
        (2, 16),
    ),
    ("gen-endless-list", GEN_E + "x = list(endless())", "limit", "loop iterations", (3, 5)),
    ("gen-endless-sorted", GEN_E + "x = sorted(endless())", "limit", "loop iterations", (3, 5)),
    ("gen-endless-in", GEN_E + "f = -1 in endless()", "limit", "loop iterations", (3, 5)),
    ("gen-endless-sum", GEN_E + "x = sum(endless())", "limit", "loop iterations", (3, 5)),
    (
        "gen-endless-zip-list",
        GEN_E + "x = list(zip(endless(), endless()))",
        "limit",
        "loop iterations",
        (6, 5),
    ),
    ("gen-endless-unpack", GEN_E + "first, *rest = endless()", "limit", "items per list", (6, 1)),
    (
        "gen-huge-items",
        "def g():\n    while True:\n        yield [0] * 10**7\nx = list(g())",
        "limit",
        "items per list",
        (3, 15),
    ),
    (
        "gen-deep-recursion",
        "def g(n):\n    yield n\n    yield from g(n + 1)\nx = list(g(0))",
        "limit",
        "call depth",
        (3, 16),
    ),
    (
        "gen-recursion-before-yield",
        "def g():\n    yield from g()\nx = next(g())",
        "limit",
        "call depth",
        (2, 16),
    ),
    (
        "gen-for-recursion",
        "def g(n):\n    for v in g(n + 1):\n        yield v\n    yield n\nx = list(g(0))",
        "limit",
        "call depth",
        (2, 14),
    ),
    ("yield-at-top", "yield 1", "syntax", "outside function", (1, 1)),
    (
        "yield-in-class-body",
        "class A:\n    x = 1\n    yield x",
        "forbidden",
        "class's body",
        (3, 5),
    ),
    ("yield-in-lambda-def", "f = lambda: (yield 1)", "forbidden", "inside a lambda", (1, 14)),
    (
        "yield-in-listcomp",
        "def f():\n    return [(yield x) for x in range(3)]",
        "syntax",
        "inside list comprehension",
        (2, 14),
    ),
    (
        "yield-in-genexp",
        "def f():\n    return list((yield x) for x in range(3))",
        "syntax",
        "inside generator expression",
        (2, 18),
    ),
    (
        "yield-in-expression",
        "def f():\n    print((yield 1))",
        "forbidden",
        "statement of its own",
        (2, 12),
    ),
    (
        "yield-in-call-arg",
        "def f():\n    x = len((yield))",
        "forbidden",
        "statement of its own",
        (2, 14),
    ),
    (
        "yield-in-with",
        "def f():\n    with torch.no_grad():\n        yield 1",
        "forbidden",
        "inside a `with`",
        (3, 9),
    ),
    (
        "yield-in-finally",
        "def f():\n    try:\n        yield 1\n    finally:\n        pass",
        "forbidden",
        "has a `finally`",
        (3, 9),
    ),
    (
        "yield-in-except",
        "def f():\n    try:\n        pass\n    except ValueError:\n        yield 1",
        "forbidden",
        "inside an `except`",
        (5, 9),
    ),
    (
        "yield-in-init",
        "class A:\n    def __init__(self):\n        yield 1\na = A()",
        "forbidden",
        "cannot be a generator",
        (3, 9),
    ),
    (
        "yield-in-module-init",
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n        yield 1",
        "forbidden",
        "cannot be a generator",
        (4, 9),
    ),
    (
        "yield-in-while-test",
        "def f():\n    while (yield):\n        pass",
        "forbidden",
        "statement of its own",
        (2, 12),
    ),
    (
        "yield-in-for-iter",
        "def f():\n    for x in (yield):\n        pass",
        "forbidden",
        "statement of its own",
        (2, 15),
    ),
    (
        "yield-in-return",
        "def f():\n    return (yield 1)",
        "forbidden",
        "statement of its own",
        (2, 13),
    ),
    ("gen-len", GEN_G + "n = len(g())", "type", "no len()", (3, 5)),
    ("gen-index", GEN_G + "n = g()[0]", "type", "cannot be indexed", (3, 5)),
    ("gen-call", GEN_G + "n = g()()", "type", "cannot be called", (3, 5)),
    (
        "gen-in-list-print-frame",
        GEN_G + "print([g()][0].gi_frame)",
        "forbidden",
        "Python's own machinery",
        (3, 7),
    ),
]
# Names with one leading underscore are the program's own; the library's and Python's stay
# out (`t._version`, `m._modules`, `torch._C`, every dunder), and a program's function run
# inside torch.autograd.functional is held to the run's caps. Each (id, program, kind,
# words, (line, column)).
T = "x = torch.ones(3, requires_grad=True)\n"
AF = "from torch.autograd.functional import jacobian, hessian, vjp, jvp\n"
OWN_NAMES_AND_FUNCTIONAL = [
    ("tensor-private-attr", T + "y = x._foo", "name", "_foo", (2, 5)),
    ("tensor-version", T + "v = x._version", "forbidden", "internals", (2, 5)),
    ("tensor-base", T + "b = x[0]._base", "forbidden", "internals", (2, 5)),
    ("tensor-cdata", T + "c = x._cdata", "forbidden", "internals", (2, 5)),
    ("tensor-class", T + "k = x.__class__", "forbidden", UNDERSCORE, (2, 5)),
    ("tensor-dict", T + "d = x.__dict__", "forbidden", UNDERSCORE, (2, 5)),
    ("grad-fn-hooks", T + "h = (x * 2).grad_fn._backward_hooks", "forbidden", "internals", (2, 5)),
    ("layer-modules", "m = nn.Linear(2, 2)\nc = m._modules", "forbidden", "internals", (2, 5)),
    ("layer-parameters", "m = nn.Linear(2, 2)\np = m._parameters", "forbidden", "internals", (2, 5)),
    ("layer-private", "m = nn.Linear(2, 2)\np = m._foo", "name", "_foo", (2, 5)),
    ("optimizer-hooks", "m = nn.Linear(2, 2)\no = optim.SGD(m.parameters(), lr=0.1)\n"
     "h = o._optimizer_step_pre_hooks", "forbidden", "internals", (3, 5)),
    ("torch-c", "c = torch._C", "forbidden", "internals", (1, 5)),
    ("torch-dynamo", "torch._dynamo.reset()", "forbidden", "internals", (1, 1)),
    ("functional-private", "F._reduction", "forbidden", "internals", (1, 1)),
    ("math-private", "import math\nm = math._x", "forbidden", "internals", (2, 5)),
    ("own-module-internals", "class N(nn.Module):\n    def __init__(self):\n"
     "        super().__init__()\n        self._forward_hooks = {}\nN()", "forbidden",
     "internals", (4, 9)),
    ("own-module-buffers-set", "class N(nn.Module):\n    def __init__(self):\n"
     "        super().__init__()\n        self._non_persistent_buffers_set = 1\nN()",
     "forbidden", "internals", (4, 9)),
    ("own-module-call-impl", "class N(nn.Module):\n    def _call_impl(self, x):\n"
     "        return x", "forbidden", "internals", (2, 5)),
    ("own-class-dunder-attr", "class A:\n    pass\na = A()\nd = a.__dict__", "forbidden",
     UNDERSCORE, (4, 5)),
    ("shown-value-name", "_3 = 1", "forbidden", "line number", (1, 1)),
    ("mangled-name", "class A:\n    def __init__(self):\n        self.__x = 1",
     "forbidden", UNDERSCORE, (3, 9)),
    ("private-keyword", "def f(**k):\n    return k\nf(_secret=1)", "forbidden", "keyword", (3, 3)),
    ("private-import", "from torch.nn import _reduction", "forbidden", "imported name", (1, 22)),
    ("jacobian-forever", AF + "def f(t):\n    while True:\n        pass\njacobian(f, torch.ones(2))",
     "limit", "loop", (3, 5)),
    ("jacobian-huge-tensor", AF + "jacobian(lambda t: torch.ones(100000, 100000), torch.ones(2))",
     "limit", "allocate", (2, 20)),
    ("jacobian-huge-output", AF + "jacobian(lambda t: t.repeat(5000), torch.ones(2))",
     "limit", "10,000 values", (2, 1)),
    ("jacobian-big-input", AF + "jacobian(lambda t: t, torch.ones(10000))",
     "limit", "10,000 values", (2, 1)),
    ("hessian-big-input", AF + "hessian(lambda t: t.sum(), torch.ones(1000))",
     "limit", "1,000 values", (2, 1)),
    ("jacobian-many-passes", AF + "def f(t):\n    for i in range(2000):\n        t = t + 1\n"
     "    return t\njacobian(f, torch.ones(500))", "limit", "backward passes", (6, 1)),
    ("jacobian-builtin", AF + "jacobian(print, torch.ones(2))", "type", "function", (2, 1)),
    ("jacobian-len", AF + "jacobian(len, torch.ones(2))", "type", "function", (2, 1)),
    ("vjp-builtin-class", AF + "vjp(list, torch.ones(2))", "type", "function", (2, 1)),
    ("jvp-namespace", AF + "jvp(torch, torch.ones(2))", "type", "function", (2, 1)),
    ("jacobian-vectorize", AF + "jacobian(lambda t: t, torch.ones(2), vectorize=True)",
     "forbidden", "vmap", (2, 1)),
    ("jacobian-nested", AF + "jacobian(lambda t: jacobian(lambda u: u, t), torch.ones(2))",
     "forbidden", "inside", (2, 20)),
    ("jacobian-backward-inside", AF + "def f(t):\n    t.sum().backward()\n    return t\n"
     "jacobian(f, torch.ones(2))", "forbidden", "inside a hook", (3, 5)),
    ("jacobian-hook-inside", AF + "def f(t):\n    t.register_hook(print)\n    return t\n"
     "jacobian(f, torch.ones(2))", "forbidden", "hook", (3, 5)),
    ("jacobian-many-tensors", AF + "jacobian(lambda *a: a[0], tuple(torch.ones(1) for i in range(40)))",
     "limit", "40 tensors", (2, 1)),
    ("super-dunder-class", "class A:\n    def f(self):\n        return super().__class__",
     "forbidden", "super", (3, 16)),
    ("super-outside-class", "def f():\n    return super().g()", "forbidden", "super", (2, 12)),
]  # fmt: skip

# a program's own torch.Generator(), Tensor.type(dtype), a range as a tensor's index and a
# module's registered buffer
BUFFER = "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        x = torch.ones(2)\n        "
TUTORIAL_SET = [
    (
        "sequential-own-module-recursion",
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "    def forward(self, x):\n        return seq(x)\nseq = nn.Sequential(M())\ny = seq(1)",
        "limit",
        "deep",
    ),
    ("module-type-call", "m = torch.nn.Module()", "type", "cannot be called"),
    ("optimizer-type-call", "o = torch.optim.Optimizer([], {})", "type", "cannot be called"),
    ("module-type-kept", "x = [torch.nn.Module]", "type", "cannot hold"),
    ("module-type-attr", "x = torch.nn.Module.__subclasses__()", "forbidden", "underscore"),
    ("module-type-forward", "x = torch.nn.Module.forward", "type", "no attribute"),
    ("module-type-mro", "x = torch.nn.Module.mro()", "type", "mro"),
    ("generator-cuda", "g = torch.Generator('cuda')", "type", "CPU generator"),
    ("generator-meta", "g = torch.Generator(device='meta')", "type", "CPU generator"),
    ("generator-get-state", "g = torch.Generator()\ns = g.get_state()", "type", "get_state"),
    (
        "generator-set-state",
        "g = torch.Generator()\ng.set_state(torch.zeros(5000, dtype=torch.uint8))",
        "type",
        "set_state",
    ),
    ("generator-inner", "g = torch.Generator()\nx = g.generator", "type", "no attribute"),
    ("generator-seed-overflow", "g = torch.Generator().manual_seed(2**70)", "runtime", "64-bit"),
    ("generator-seed-str", "g = torch.Generator().manual_seed('a')", "type", "one integer"),
    ("generator-as-data", "g = torch.Generator()\nx = torch.tensor([g])", "type", "not a"),
    ("generator-arith", "g = torch.Generator()\nx = torch.ones(3) + g", "type", "not on a"),
    ("generator-iterate", "g = torch.Generator()\nfor v in g:\n    pass", "type", "iterated"),
    ("generator-not-one", "x = torch.randn(3, generator='g')", "type", "torch.Generator()"),
    ("type-string-device", "x = torch.ones(3).type('torch.cuda.FloatTensor')", "type", "dtype"),
    ("type-extra", "x = torch.ones(3).type(torch.float64, non_blocking=True)", "type", "dtype"),
    ("range-index-huge", "x = torch.ones(3)[range(10**9)]", "limit", "items per list"),
    ("range-index-tuple", "x = torch.ones(3, 3)[0, range(10**9)]", "limit", "items per list"),
    ("buffer-dunder", BUFFER + "self.register_buffer('__class__', x)\nm = M()", "type", "public"),
    ("buffer-not-tensor", BUFFER + "self.register_buffer('b', [1])\nm = M()", "type", "tensor"),
    (
        "buffer-training",
        BUFFER + "self.register_buffer('training', x)\nm = M()",
        "runtime",
        "exists",
    ),
    ("buffer-method", BUFFER + "self.register_buffer('forward', x)\nm = M()", "type", "exists"),
    (
        "buffer-huge",
        BUFFER + "self.register_buffer('b', torch.zeros(10**6, 10**4))\nm = M()",
        "limit",
        "allocate",
    ),
    (
        "buffer-kwargs",
        BUFFER + "self.register_buffer('b', x, hook=print)\nm = M()",
        "type",
        "three",
    ),
]

HOSTILE = (
    HOSTILE
    + TUTORIAL_SET
    + AUTOGRAD_API
    + CLOCKS
    + DECORATORS
    + SETS
    + RAISES
    + KEPT_FUNCTIONS
    + RANDOM
    + DATA_UPDATES
    + AUTOGRAD
    + TENSOR_IN_TENSOR
    + TRY_EXCEPT
    + [g[:4] for g in GREW]
    + [c[:4] for c in PLAIN_CLASSES]
    + [g[:4] for g in GENERATORS]
    + [c[:4] for c in OWN_NAMES_AND_FUNCTIONAL]
    + [c[:4] for c in COUNTED]
)

# `import numpy as np` (gradviz.program.runtime.arrays): no object or text arrays, no files,
# no raw memory, no callbacks into the program, every array sized before it is made; each
# refused at its line and column.
N = "import numpy as np\n"
A = N + "a = np.ones(3)\n"
NUMPY = [
    ("np-object-dtype", N + "a = np.array([1, 2], dtype=object)", "name", "object", (2, 28)),
    (
        "np-object-dtype-kept",
        N + "a = np.zeros(2, np.bool_)\nb = np.ones(2, a.dtype)\n"
        "c = np.array([1], dtype=np.dtype('O'))",
        "name",
        "not available",
        (4, 25),
    ),
    ("np-object-text-dtype", N + 'a = np.zeros(3, dtype="O")', "type", "not the text", (2, 5)),
    ("np-ragged-lists", N + "a = np.array([[1, 2], [3]])", "runtime", "inhomogeneous", (2, 5)),
    ("np-none-item", N + "a = np.array([1, None])", "type", "numbers only", (2, 5)),
    (
        "np-array-of-function",
        N + "def f():\n    return 1\na = np.array([f])",
        "type",
        "not a function",
        (4, 5),
    ),
    ("np-array-of-text", N + 'a = np.array(["a", "b"])', "type", "not the text", (2, 5)),
    ("np-astype-object", A + 'b = a.astype("O")', "type", "not the text", (3, 5)),
    ("np-load", N + 'a = np.load("secrets.npy")', "name", "cannot read or write files", (2, 5)),
    ("np-save", A + 'np.save("pwned.npy", a)', "name", "cannot read or write files", (3, 1)),
    ("np-fromfile", N + 'a = np.fromfile("/etc/passwd")', "name", "cannot read", (2, 5)),
    ("np-loadtxt", N + 'a = np.loadtxt("/etc/passwd")', "name", "cannot read", (2, 5)),
    ("np-memmap", N + 'a = np.memmap("pwned", mode="w+")', "name", "cannot read", (2, 5)),
    ("np-tofile", A + 'a.tofile("pwned.bin")', "forbidden", "cannot read or write", (3, 1)),
    ("np-huge-zeros", N + "a = np.zeros((10**6, 10**6))", "limit", "would allocate", (2, 5)),
    ("np-huge-arange", N + "a = np.arange(10**12)", "limit", "would allocate", (2, 5)),
    ("np-huge-linspace", N + "a = np.linspace(0, 1, 10**10)", "limit", "would allocate", (2, 5)),
    ("np-huge-eye", N + "a = np.eye(10**6)", "limit", "would allocate", (2, 5)),
    ("np-empty", N + "a = np.empty((3, 3))", "forbidden", "uninitialised", (2, 5)),
    (
        "np-broadcast-bomb",
        N + "a = np.ones((10**5, 1)) + np.ones((1, 10**5))",
        "limit",
        "would allocate",
        (2, 5),
    ),
    (
        "np-lib-stride-tricks",
        A + "b = np.lib.stride_tricks.as_strided(a, (10**9,), (0,))",
        "forbidden",
        "raw memory",
        (3, 5),
    ),
    ("np-ctypes", A + "p = a.ctypes", "name", "no attribute", (3, 5)),
    ("np-array-interface", A + "p = a.__array_interface__", "forbidden", "underscore", (3, 5)),
    ("np-frompyfunc", N + "f = np.frompyfunc(print, 1, 1)", "forbidden", "cannot call", (2, 5)),
    ("np-vectorize", N + "f = np.vectorize(print)", "forbidden", "cannot call", (2, 5)),
    ("np-random-bytes", N + "b = np.random.bytes(10**9)", "forbidden", "randint", (2, 5)),
    (
        "np-random-flood",
        N + "a = np.random.rand(10**5, 10**5)",
        "limit",
        "would allocate",
        (2, 5),
    ),
    (
        "np-choice-permutation-bomb",
        N + "a = np.random.choice(10**12, 3, replace=False)",
        "limit",
        "would allocate",
        (2, 5),
    ),
    (
        "np-repeat-bomb",
        N + "a = np.ones(10**6)\nb = np.repeat(a, 10**6)",
        "limit",
        "would allocate",
        (3, 5),
    ),
    (
        "np-tile-bomb",
        N + "a = np.ones(1000)\nb = np.tile(a, (10**6, 10))",
        "limit",
        "would allocate",
        (3, 5),
    ),
    ("np-fromstring", N + 'a = np.fromstring("1 2", sep=" ")', "forbidden", "raw bytes", (2, 5)),
    (
        "np-fancy-index-bomb",
        N + "a = np.ones((1000, 1000))\nb = a[np.zeros(10**6, dtype=int)]",
        "limit",
        "would allocate",
        (3, 5),
    ),
    (
        "np-matmul-flops",
        N + "a = np.ones((2000, 2000))\nb = a @ a",
        "limit",
        "floating-point operations",
        (3, 5),
    ),
    (
        "np-requires-grad",
        N + "w = torch.ones(3, requires_grad=True)\na = np.asarray(w)",
        "runtime",
        "requires grad",
        (3, 5),
    ),
    ("np-tensor-operand", A + "b = a + torch.ones(3)", "type", "convert one first", (3, 5)),
    (
        "np-sum-loop",
        N + "a = np.ones(10**7)\nfor i in range(1000):\n    s = a.sum()",
        "limit",
        "values in all",
        (4, 9),
    ),
    (
        "np-bigint-power",
        N + "b = np.power([10**1000], 10**7)",
        "type",
        "64 bits",
        (2, 5),
    ),
    (
        "np-norm-decomposition",
        N + "m = np.ones((3000, 3000))\nn = np.linalg.norm(m, 2)",
        "forbidden",
        "default order",
        (3, 5),
    ),
    (
        "np-print-many-short-dimensions",
        N + "a = np.zeros((2,) * 22)\nprint(a)",
        "limit",
        "printing this array",
        (3, 1),
    ),
    (
        "np-shape-of-floats",
        N + "a = np.zeros((2.5, 10**9))",
        "type",
        "sizes must be integers",
        (2, 5),
    ),
]

HOSTILE = HOSTILE + [n[:4] for n in NUMPY]

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
    (  # layers draw from the run's generator: torch's global one is untouched
        "nn-training-is-private",
        "net = nn.Sequential(nn.Linear(2, 4), nn.Dropout(0.5), nn.Linear(4, 1))\n"
        "opt = optim.Adam(net.parameters())\n"
        "x = torch.randn(8, 2)\n"
        "loss = net(x).pow(2).mean()\nloss.backward()\nopt.step()\n"
        "ds = torch.utils.data.TensorDataset(x)\n"
        "l = torch.utils.data.DataLoader(ds, batch_size=2, shuffle=True)\n",
    ),
    ("print-a-long-list", "l = list(range(10000))\nprint(l)\nprint(f'{len(l)}')"),
    (
        "loop-under-the-caps",
        "x = torch.ones(3, requires_grad=True)\nfor i in range(100):\n    y = (x * i).sum()\n"
        "    y.backward()",
    ),
    (
        "grown-language-under-the-caps",
        "count = 0\ndef step(*shape, **options):\n    global count\n    count += 1\n"
        "    t = torch.ones(*shape, **options)\n    first, *rest = t.shape\n    return t\n"
        "x = step(2, 3, requires_grad=True)\nparts = [*x.shape, 1]\ndel parts[0]\n"
        "print('{0} {d[k]:>4} {0}'.format(count, d={'k': len(parts)}))",
    ),
    ("recursion-under-the-cap", "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nd = f(40)"),
    (
        "imports-tutorials-write",
        "import torch\nimport torch.nn as nn\nimport math\nr = math.sqrt(2)",
    ),
]

# Within every cap of the interpreter, but slow: only the worker's wall-clock limit stops
# these (torch.unique sorts 25 million values: seconds each on one thread).
SANDBOX_ONLY = [
    ("unique-sorts", "a = torch.rand(5000, 5000)\nb = torch.unique(a)\nc = torch.unique(a)"),
    # each sleep is within its 1 s cap; the run's wall-clock limit stops the loop
    ("sleep-loop", "import time\nfor i in range(1000):\n    time.sleep(1)"),
    (
        "sleep-loop-in-try",
        "import time\nfor i in range(1000):\n    try:\n        time.sleep(1)\n"
        "    except Exception:\n        pass\n    finally:\n        time.sleep(1)",
    ),
]

# `from <module> import <name>` (each name what `module.name` reads, from the same tables),
# numpy's Generator (np.random.default_rng) and np.linalg: refused, or stopped by a cap
# before any work, at the line and column of the cause.
G = N + "rng = np.random.default_rng(0)\n"
FT = "from torch import Tensor\n"
NG = "from torch import no_grad\n"
DS = "class D(torch.utils.data.Dataset):\n    pass\n"
IMPORTS_AND_DRAWS = [
    ("from-os-path", "from os import path", "forbidden", "`os` is not available", (1, 1)),
    ("from-builtins-open", "from builtins import open", "forbidden", "not available", (1, 1)),
    ("from-sys-modules", "from sys import modules", "forbidden", "not available", (1, 1)),
    ("from-importlib", "from importlib import import_module", "forbidden", "not available", (1, 1)),
    ("from-relative", "from . import x", "forbidden", "relative imports", (1, 1)),
    ("from-star", "from torch.utils.data import *", "forbidden", "name what you need", (1, 1)),
    ("from-torch-private", "from torch import nn, _C", "forbidden", UNDERSCORE, (1, 23)),
    ("from-data-private", "from torch.utils.data import _utils", "forbidden", UNDERSCORE, (1, 30)),
    (
        "from-as-dunder",
        "from torch.nn import Module as __builtins__",
        "forbidden",
        UNDERSCORE,
        (1, 1),
    ),
    ("from-numpy-load", "from numpy import load", "name", "cannot read or write files", (1, 19)),
    (
        "from-numpy-random-state",
        "from numpy.random import RandomState, default_rng",
        "name",
        "not available",
        (1, 26),
    ),
    ("from-numpy-ctypes", "from numpy import ctypeslib", "forbidden", "raw memory", (1, 19)),
    ("from-torch-hub", "from torch import hub", "name", "not available", (1, 19)),
    ("from-torch-save-as", "from torch import save as keep", "name", "cannot write files", (1, 19)),
    (
        "from-autograd-function",
        "from torch.autograd import Function",
        "name",
        "`torch.autograd.Function` is not available",
        (1, 28),
    ),
    ("from-random-class", "from random import Random", "name", "not available", (1, 20)),
    ("from-typing-unknown", "from typing import TYPE_CHECKING", "name", "not available", (1, 20)),
    ("from-dataclasses-fields", "from dataclasses import fields", "forbidden", "only", (1, 25)),
    (
        "from-import-shadows-print",
        "from math import sqrt as print",
        "forbidden",
        "built-in",
        (1, 1),
    ),
    ("from-import-rebinds-F", "from torch import tensor as F", "forbidden", "cannot name", (1, 1)),
    (
        "imported-module-dunder",
        "from torch.nn import Module\nd = Module.__dict__",
        "forbidden",
        UNDERSCORE,
        (2, 5),
    ),
    (
        "imported-module-hook",
        "from torch.nn import Module\nModule.register_forward_hook(print)",
        "type",
        "no method",
        (2, 1),
    ),
    (
        "imported-tensor-type-called",
        "from torch import Tensor\nt = Tensor(10**12)",
        "limit",
        "would allocate",
        (2, 5),
    ),  # fmt: skip
    ("typing-name-kept", "from typing import List\nx = [List]", "type", "cannot hold", (2, 6)),
    (
        "imported-module-base-dunder-method",
        "from torch.nn import Module\nclass Net(Module):\n    def __getattr__(self, n):\n"
        "        return 1",
        "forbidden",
        UNDERSCORE,
        (3, 5),
    ),
    (
        "imported-module-base-class-attribute",
        "from torch.nn import Module as M\nclass Net(M):\n    x = 1",
        "forbidden",
        "methods (`def`) only",
        (3, 5),
    ),
    ("annotation-call", "x: __import__('os') = 1", "forbidden", "annotation is made of", (1, 4)),
    ("annotation-lambda", "x: (lambda: 1)() = 1", "forbidden", "annotation is made of", (1, 4)),
    (
        "annotated-value-open",
        "from typing import Any\nf: Any = open('x', 'w')",
        "name",
        "cannot read or write files",
        (2, 10),
    ),  # fmt: skip
    (
        "annotated-attribute-target",
        "import math\nmath.pi: float = 3",
        "forbidden",
        "annotated",
        (2, 1),
    ),  # fmt: skip
    ("rng-bit-generator", G + "s = rng.bit_generator.state", "type", "bit_generator", (3, 5)),
    (
        "rng-bit-generator-chained",
        N + "b = np.random.default_rng(0).bit_generator",
        "type",
        "no attribute",
        (2, 5),
    ),  # fmt: skip
    ("rng-kept-method", G + "f = rng.normal", "type", "no attribute", (3, 5)),
    ("rng-spawn", G + "kids = rng.spawn(2)", "type", "no method `.spawn`", (3, 8)),
    ("rng-bytes", G + "b = rng.bytes(10**9)", "type", "no method `.bytes`", (3, 5)),
    (
        "rng-seeded-by-module",
        N + "np.random.default_rng(np.random)",
        "type",
        "not a module",
        (2, 1),
    ),  # fmt: skip
    ("rng-integers-huge", G + "rng.integers(0, 2, size=10**12)", "limit", "would allocate", (3, 1)),
    (
        "rng-normal-huge-shape",
        G + "x = rng.normal(size=(10**6, 10**6))",
        "limit",
        "would allocate",
        (3, 5),
    ),  # fmt: skip
    (
        "rng-choice-huge-population",
        G + "rng.choice(10**12, 3, replace=False)",
        "limit",
        "would allocate",
        (3, 1),
    ),  # fmt: skip
    (
        "rng-choice-huge-draw",
        G + "rng.choice(np.arange(10), size=10**10)",
        "limit",
        "would allocate",
        (3, 1),
    ),  # fmt: skip
    (
        "rng-permutation-huge",
        G + "p = rng.permutation(10**12)",
        "limit",
        "would allocate",
        (3, 5),
    ),  # fmt: skip
    ("rng-float-size", G + "x = rng.random(2.5e9)", "type", "sizes must be integers", (3, 5)),
    ("rng-choice-of-function", G + "rng.choice([print])", "type", "cannot hold", (3, 13)),
    (
        "rng-shuffle-tensor",
        G + "rng.shuffle(torch.ones(3))",
        "type",
        "shuffles one array",
        (3, 1),
    ),  # fmt: skip
    ("rng-out-argument", G + "rng.random(3, out=np.zeros(3))", "forbidden", "out=", (3, 15)),
    (
        "linalg-inv-huge",
        N + "a = np.ones((3000, 3000))\nb = np.linalg.inv(a)",
        "limit",
        "floating-point operations",
        (3, 5),
    ),  # fmt: skip
    (
        "linalg-det-stack",
        N + "a = np.ones((200, 300, 300), np.float32)\nd = np.linalg.det(a)",
        "limit",
        "floating-point operations",
        (3, 5),
    ),  # fmt: skip
    (
        "linalg-solve-huge",
        N + "a = np.ones((3000, 3000))\nx = np.linalg.solve(a, a[0])",
        "limit",
        "floating-point operations",
        (3, 5),
    ),  # fmt: skip
    # torch's names imported by themselves: the values their dotted forms read, no more
    ("tensor-class-subclasses", FT + "Tensor.__subclasses__()", "forbidden", UNDERSCORE, (2, 1)),
    ("tensor-class-mro", FT + "x = Tensor.mro()", "type", "has no method", (2, 5)),
    ("tensor-class-kept", FT + "y = [Tensor]", "type", "cannot hold", (2, 6)),
    ("tensor-class-called-on-function", FT + "Tensor(print)", "type", "not built-in", (2, 1)),
    ("grad-mode-dunder", NG + "g = no_grad\ng.__enter__()", "forbidden", UNDERSCORE, (3, 1)),
    ("grad-mode-marker-name", NG + "y = no_grad.name", "type", "no attribute", (2, 5)),
    (
        "grad-mode-rebound-decorator",
        NG + "def no_grad(f):\n    return print\n@no_grad\ndef g():\n    pass",
        "type",
        "cannot decorate",
        (4, 2),
    ),  # fmt: skip
    ("grad-mode-called-kept", NG + "m = no_grad()", "type", "is used as `with", (2, 5)),
    ("grad-mode-as-name", NG + "with no_grad() as m:\n    pass", "forbidden", "as name", (2, 19)),
    (
        "dataset-base-of-base",
        "class D(torch.utils.data.Dataset.__base__):\n    pass",
        "forbidden",
        "class's base",
        (1, 9),
    ),  # fmt: skip
    ("dataset-base-internals", DS + "y = D().torch_type", "name", "no attribute", (3, 5)),
    ("dataset-class-internals", DS + "x = D.torch_base", "name", "no attribute", (3, 5)),
    ("dataset-base-elsewhere", N + "class D(np.random.Dataset):\n    pass", "name", "not", (2, 9)),
    # a generator's repr shows an address the run made up: nothing of the object behind it
    ("rng-type", G + "t = type(rng)", "name", "`type` is not defined", (3, 5)),
    ("rng-id", G + "print(id(rng))", "name", "`id` is not defined", (3, 7)),
    ("rng-shown-address-attribute", G + "a = rng.address", "type", "no attribute", (3, 5)),
    ("rng-bit-generator-state", G + "b = rng.bit_generator.state", "type", "no attribute", (3, 5)),
    ("torch-generator-inner", "g = torch.Generator()\na = g.generator", "type", "no attr", (2, 5)),
    # a class on an aliased nn (import torch.nn as tnn) is a module like any other: its name
    # in PyTorch's repr is a plain callable the program cannot reach
    (
        "aliased-module-get-name",
        "import torch.nn as tnn\nclass N(tnn.Module):\n    pass\nf = N()._get_name",
        "forbidden",
        "underscore",
        (4, 5),
    ),  # fmt: skip
    (
        "aliased-module-dict",
        "import torch.nn as tnn\nclass N(tnn.Module):\n    pass\nd = N().__dict__",
        "forbidden",
        "underscore",
        (4, 5),
    ),  # fmt: skip
    (
        "aliased-module-of-numpy",
        "import numpy as tnn\nclass N(tnn.Module):\n    pass",
        "forbidden",
        "class's base",
        (2, 9),
    ),  # fmt: skip
]

HOSTILE = HOSTILE + [n[:4] for n in IMPORTS_AND_DRAWS]
