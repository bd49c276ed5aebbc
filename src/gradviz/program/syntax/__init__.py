"""The language's text (no torch): the checker that turns source into a checked `ast.Module` or one
`ProgramError`, its grammar and rules."""
