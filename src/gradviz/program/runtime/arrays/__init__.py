"""The `numpy` a program may import: plain numeric arrays, sized before they are made."""
