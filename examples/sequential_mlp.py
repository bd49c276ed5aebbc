# An nn.Sequential MLP (run backward on `loss`: --backward loss)
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
x = torch.randn(5, 4, requires_grad=True)
target = torch.tensor([0, 2, 1, 1, 0])
loss = F.cross_entropy(net(x), target)
