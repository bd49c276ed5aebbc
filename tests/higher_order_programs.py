"""Programs with second derivatives, shared by the tests of their recording, their drawing
and the Autograd page."""

HESSIAN = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
def f(x):
    return (x ** 3).sum()
H = torch.autograd.functional.hessian(f, x, create_graph=True)
s = H.sum()
s.backward()
"""
BY_HESSIAN = "hessian's backward passes at line 5"  # the label of the nodes its passes built
