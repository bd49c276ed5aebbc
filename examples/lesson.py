# The lesson: y = mean((x + 2)^2 + 3). After backward, x.grad = [2.0000, 2.6667, 3.3333].
x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
a = x + 2
b = a ** 2
c = b + 3
y = c.mean()
