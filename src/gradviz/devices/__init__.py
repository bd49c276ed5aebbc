"""Devices: what a host offers (info, facts), simulated CUDA (simulated), device errors
explained (errors), the device lessons (lessons) and what moving data costs (transfer)."""
