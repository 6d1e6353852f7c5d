"""bcachefs for pgfsbench: one filesystem recipe (``recipe.py``)."""
