# One attention head: softmax(QKᵀ/√d)V (run backward on `loss`: --backward loss)
import math
torch.manual_seed(0)
x = torch.randn(4, 8)
Wq = torch.randn(8, 8, requires_grad=True)
Wk = torch.randn(8, 8, requires_grad=True)
Wv = torch.randn(8, 8, requires_grad=True)
q = x @ Wq
k = x @ Wk
v = x @ Wv
weights = F.softmax(q @ k.T / math.sqrt(8), dim=-1)
out = weights @ v
loss = out.pow(2).mean()
