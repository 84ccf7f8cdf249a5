"""Graph nodes, one module per stage; `agent/graph.py` wires them."""
