"""The program language: checked syntax (language), allow-lists (tables), the interpreter,
gradient checks, error explanations, results, presets and share links."""
