"""Messages (spec: Endpoints, Messages): conversations, the send pipeline, delivery, providers."""
