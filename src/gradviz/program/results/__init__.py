"""What a run gives back and the caps it runs under, as plain data (no torch: the server reads
these): the Trace, its reports, backward calls, the Limits, and PyTorch's errors explained."""
