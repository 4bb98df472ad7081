"""The top layer: the referee, the game log, the web app and the command line, composing everything below."""
