"""Reading GET /metrics in tests with prometheus_client's own parser."""

from prometheus_client.parser import text_string_to_metric_families

TOKEN = "metrics-token-for-tests-0123456789abcdef"


def scrape(client, token: str = TOKEN) -> dict:
    """{(sample name, frozenset of labels): value} of one scrape, parsed by prometheus_client."""
    response = client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/plain"
    samples = {}
    for family in text_string_to_metric_families(response.get_data(as_text=True)):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: dict, name: str, **labels) -> float:
    """One sample's value; 0 when the series does not exist yet (a counter not moved)."""
    return samples.get((name, frozenset(labels.items())), 0.0)
