"""Reading the real dice: frame sources, dice finding, the face classifier, the simulated table."""
