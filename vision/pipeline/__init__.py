"""Reading dice as named stages, each a small module with typed input and output.

``normalise`` (check the frame, cut the tray region, grey) → ``propose`` (a
``Detector`` plug-in: centre, side, angle and score per die) → ``crop``
(upright, the same cropper as training) → ``classify`` (face and confidence)
→ ``reconcile`` (duplicates, not-dice, the expected count, dice cut off or
outside the tray) → ``decide`` (``ok``, or ``uncertain`` with a reason per die,
with margins around every threshold). ``reader.PipelineReader`` runs them.
"""
