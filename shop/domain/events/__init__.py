"""Events (spec: Events): the catalog of event types and the outbox that emits and fans them out."""
