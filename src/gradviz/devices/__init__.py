"""Devices: what a host offers (info, facts), simulated CUDA (simulated), the device
lessons (lessons) and what moving data costs (transfer)."""
