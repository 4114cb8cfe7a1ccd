"""The MCP server's memory tools: the same services and output schemas as the JSON API.

May import: memories.api's schemas, memories.write, memories.recall.hybrid, memories.store.
"""
