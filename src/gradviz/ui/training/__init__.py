"""The CIFAR-10 training page (`page`) and its parts."""
