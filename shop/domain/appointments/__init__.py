"""Appointments (spec: Appointments): the status machine, ticket links, capacity and bookable slots."""
