"""Training code of the learned dice detector (``vision.detector_learned``); recipe in ``models/DETECTOR_CARD.md``."""
