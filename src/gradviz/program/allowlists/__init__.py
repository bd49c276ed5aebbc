"""What a program may name in torch, kept as data: the functions, methods and attributes (tables)
and the torch.nn, torch.optim and torch.utils.data classes (nntables)."""
