"""Reading the real dice: frame sources, dice finding, the face classifier, the simulated table."""

import os as _os

# OpenCV decodes any image up to 2**30 pixels by default: a TIFF or WebP of a
# few hundred KB (no size in a header we check) could decode to gigabytes.
# OpenCV reads this limit once, when it is first imported, so it is set here,
# before any vision module imports cv2 (vision.images.MAX_PIXELS, 40 MP).
_os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", "40000000")

# The reader's settings are registered whenever any of vision is imported, so a
# reader built from ``Settings.defaults()`` finds its keys.
from vision import settings as _settings  # noqa: E402,F401
