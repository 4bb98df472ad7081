"""The bottom layer: errors, the value types a reading and a capture are made of, the protocols, the settings registry.

It imports nothing else of the project, so every layer above may use it.
"""
