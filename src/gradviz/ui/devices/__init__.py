"""The Devices page (`page`)."""
