"""One module per CLI command group; each exposes ``register(app)``.

``rlstream.cli`` discovers the modules here, so adding a command group never touches another's file.
"""
