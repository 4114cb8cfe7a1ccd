"""The JSON API of the memories app: one ninja router module per resource (memories,
extractions, skills, facts, threads and their messages, context, conflicts), each with
the schemas only it uses; what they share (error sets, input types, the task and skill of
a call) in schemas.py. Routers validate, authorise, call the services (memories.write,
memories.recall, memories.store) and shape the output. Mounted by spaceduck.ops.api.
"""
