"""Real fault logs (issue 22; docs/traces.md): reading a cluster's log, its statistics."""
