# Andrej Karpathy, makemore (makemore.py): the GRUCell and the RNN module's forward in its
# 'gru' mode, as written. Changed for data loading: a few names written inline are encoded
# as in the CharDataset (no files, no argparse); a tiny config (n_embd 8, n_embd2 12) and 20
# AdamW steps on the whole batch.
import torch
import torch.nn as nn
from torch.nn import functional as F


class ModelConfig:
    def __init__(self, block_size, vocab_size, n_embd, n_embd2):
        self.block_size = block_size
        self.vocab_size = vocab_size
        self.n_embd = n_embd
        self.n_embd2 = n_embd2


class GRUCell(nn.Module):
    """
    same job as RNN cell, but a bit more complicated recurrence formula
    that makes the GRU more expressive and easier to optimize.
    """
    def __init__(self, config):
        super().__init__()
        # input, forget, output, gate
        self.xh_to_z = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)
        self.xh_to_r = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)
        self.xh_to_hbar = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)

    def forward(self, xt, hprev):
        # first use the reset gate to wipe some channels of the hidden state to zero
        xh = torch.cat([xt, hprev], dim=1)
        r = F.sigmoid(self.xh_to_r(xh))
        hprev_reset = r * hprev
        # calculate the candidate new hidden state hbar
        xhr = torch.cat([xt, hprev_reset], dim=1)
        hbar = F.tanh(self.xh_to_hbar(xhr))
        # calculate the switch gate that determines if each channel should be updated at all
        z = F.sigmoid(self.xh_to_z(xh))
        # blend the previous hidden state and the candidate new hidden state
        ht = (1 - z) * hprev + z * hbar
        return ht


class RNN(nn.Module):

    def __init__(self, config, cell_type):
        super().__init__()
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.start = nn.Parameter(torch.zeros(1, config.n_embd2)) # the starting hidden state
        self.wte = nn.Embedding(config.vocab_size, config.n_embd) # token embeddings table
        if cell_type == 'rnn':
            self.cell = RNNCell(config)
        elif cell_type == 'gru':
            self.cell = GRUCell(config)
        self.lm_head = nn.Linear(config.n_embd2, self.vocab_size)

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()

        # embed all the integers up front and all at once for efficiency
        emb = self.wte(idx) # (b, t, n_embd)

        # sequentially iterate over the inputs and update the RNN state each tick
        hprev = self.start.expand((b, -1)) # expand out the batch dimension
        hiddens = []
        for i in range(t):
            xt = emb[:, i, :] # (b, n_embd)
            ht = self.cell(xt, hprev) # (b, n_embd2)
            hprev = ht
            hiddens.append(ht)

        # decode the outputs
        hidden = torch.stack(hiddens, 1) # (b, t, n_embd2)
        logits = self.lm_head(hidden)

        # if we are given some desired targets also calculate the loss
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

        return logits, loss


words = ['emma', 'olivia', 'ava', 'isabella', 'sophia', 'charlotte', 'mia', 'amelia']
chars = sorted(list(set(''.join(words))))
max_word_length = max(len(w) for w in words)
stoi = {ch:i+1 for i,ch in enumerate(chars)}
itos = {i:s for s,i in stoi.items()} # inverse mapping


def encode(word):
    ix = torch.tensor([stoi[w] for w in word], dtype=torch.long)
    return ix


def get_item(idx):
    word = words[idx]
    ix = encode(word)
    x = torch.zeros(max_word_length + 1, dtype=torch.long)
    y = torch.zeros(max_word_length + 1, dtype=torch.long)
    x[1:1+len(ix)] = ix
    y[:len(ix)] = ix
    y[len(ix)+1:] = -1 # index -1 will mask the loss at the inactive locations
    return x, y


X = torch.stack([get_item(i)[0] for i in range(len(words))])
Y = torch.stack([get_item(i)[1] for i in range(len(words))])
config = ModelConfig(block_size=max_word_length + 1, vocab_size=len(chars) + 1,
                     n_embd=8, n_embd2=12)
model = RNN(config, cell_type='gru')
print(f"model #params: {sum(p.numel() for p in model.parameters())}")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
for step in range(20):
    logits, loss = model(X, Y)
    model.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        print(f"step {step} | loss {loss.item():.4f}")
