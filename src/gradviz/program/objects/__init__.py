"""The torch objects a program makes: layers (torch.nn), optimizers and schedulers, data sets and
loaders, and what they share."""
