"""The Elephants Bluff table companion: the referee, its game log and its web app."""

__version__ = "0.1.0"
