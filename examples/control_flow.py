# Control flow: d2l's f(a) (run backward on `d`: --backward d)
def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c

torch.manual_seed(0)
a = torch.randn(size=(), requires_grad=True)
d = f(a)
