"""The htmx dashboard: views (one module per page family), forms, the page queries
(overview, extraction log, thread pages, fact pages) and the context processor.

Thin: every write goes through memories.write, every search through memories.recall.hybrid.
May import everything below it (store, write, upkeep, recall, extraction) and the kernel.
"""
