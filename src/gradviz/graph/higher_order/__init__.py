"""Higher-order gradients on the drawing: the nodes a create_graph=True backward built."""
