# d2l.ai, "Implementation of Multilayer Perceptrons from Scratch" (PyTorch tab, 2nd edition),
# as written. Changed for data loading: Fashion-MNIST is replaced by small synthetic batches
# of 28x28 "images" labelled by a fixed linear rule; 2 epochs; d2l.train_ch3's loop is written
# out (as the book's library has it), without the plotting.
import torch
from torch import nn

batch_size = 32
teacher = torch.randn(784, 10)
train_iter = []
for _ in range(8):
    X = torch.randn(batch_size, 1, 28, 28)
    train_iter.append((X, (X.reshape(-1, 784) @ teacher).argmax(dim=1)))
test_iter = train_iter[:2]

num_inputs, num_outputs, num_hiddens = 784, 10, 256

W1 = nn.Parameter(torch.randn(
    num_inputs, num_hiddens, requires_grad=True) * 0.01)
b1 = nn.Parameter(torch.zeros(num_hiddens, requires_grad=True))
W2 = nn.Parameter(torch.randn(
    num_hiddens, num_outputs, requires_grad=True) * 0.01)
b2 = nn.Parameter(torch.zeros(num_outputs, requires_grad=True))

params = [W1, b1, W2, b2]


def relu(X):
    a = torch.zeros_like(X)
    return torch.max(X, a)


def net(X):
    X = X.reshape((-1, num_inputs))
    H = relu(X@W1 + b1)  # Here '@' stands for matrix multiplication
    return (H@W2 + b2)


loss = nn.CrossEntropyLoss(reduction='none')


def accuracy(y_hat, y):
    """Compute the number of correct predictions."""
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


def train_epoch(net, train_iter, loss, updater):
    total_loss, total_correct, total = 0.0, 0.0, 0
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)
        updater.zero_grad()
        l.mean().backward()
        updater.step()
        total_loss += float(l.sum())
        total_correct += accuracy(y_hat, y)
        total += y.numel()
    return total_loss / total, total_correct / total


def evaluate_accuracy(net, data_iter):
    correct, total = 0.0, 0
    with torch.no_grad():
        for X, y in data_iter:
            correct += accuracy(net(X), y)
            total += y.numel()
    return correct / total


num_epochs, lr = 2, 0.1
updater = torch.optim.SGD(params, lr=lr)
for epoch in range(num_epochs):
    train_loss, train_acc = train_epoch(net, train_iter, loss, updater)
    test_acc = evaluate_accuracy(net, test_iter)
    print(f'epoch {epoch + 1}, loss {train_loss:.3f}, train acc {train_acc:.3f}, '
          f'test acc {test_acc:.3f}')
