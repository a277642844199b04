"""Webhooks (spec: Webhook subscriptions; Events: delivery, signing, destination protection)."""
