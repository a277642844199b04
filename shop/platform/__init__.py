"""What every request passes through: errors, auth, rate limit, idempotency, cursors, usage log."""
