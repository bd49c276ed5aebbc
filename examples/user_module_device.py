# Your own module on the GPU: model.to(device) (run backward on `out`: --backward out)
torch.manual_seed(0)
class UserDefinedModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(10, 1)
    def forward(self, x):
        return self.linear(x)
model = UserDefinedModel()
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
model.to(device)
print(next(model.parameters()).device)
x = torch.randn(8, 10, requires_grad=True)
out = model(x.to(device)).mean()
