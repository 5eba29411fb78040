"""Model metadata: catalogue, context windows, prices and costs."""
