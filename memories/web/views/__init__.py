"""Dashboard views, one module per page family; each validates, calls selectors/services and
renders (htmx fragments by partial). ``memory`` is the memory viewer, its page and the review
queue; the others are the service's running state (overview, extraction log, threads, facts,
settings) and its API tokens (tokens)."""
