"""Python's semantics under the caps: the values a program holds, its calls into torch, operators,
containers, strings, iteration, its own functions, the built-ins and the modules it may import
(math, time, random)."""
