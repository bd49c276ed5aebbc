# An SGD loop with zero_grad()
torch.manual_seed(0)
x = torch.randn(16, 1)
y = 3 * x + 1
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = ((x * w + b - y) ** 2).mean()
    loss.backward()
    opt.step()
    print(step, loss.item(), w.grad)
