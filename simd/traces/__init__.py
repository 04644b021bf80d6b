"""Real fault logs (docs/traces.md): reading a cluster's log, its statistics."""
