"""The classic detector's tunables: every threshold of its finder, its reader's cascade and its look by marks.

The classic plug-in (``reader.detector = "classic"``: ``vision.finder``,
``vision.classic_reader``, ``vision.marks``) reads its numbers from ``CLASSIC`` and
nowhere else. Sizes are in the finder's working pixels unless a comment says
"share" (of the frame's long side, a die's side or area) or "frame pixels".
Grey levels mean a frame exposed like the tray camera's (``finder.exposed``
brightens a dim one first). How each number was measured is told in
``docs/CLASSIC-READER.md``.

>>> CLASSIC.work_side
320
>>> from dataclasses import replace
>>> replace(CLASSIC, diff_threshold=30).diff_threshold
30
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClassicTunables:
    """The classic detector's thresholds, one named field each (see the module's docstring for units)."""

    # --- the working copy and its exposure (finder) ---
    #: long side of the working copy: a tray camera's die is about 14 px there, and a look costs about a millisecond
    work_side: int = 320
    #: a frame whose brightest pixels (this quantile of the largest channel) are dimmer than ``exposure_level``...
    exposure_quantile: float = 0.995
    #: ...is brightened to this level (grey), so every grey-level threshold means the same on a dim photo
    exposure_level: int = 160
    #: at most this gain: more would turn a dark frame's noise into blobs
    max_gain: float = 4.0

    # --- the clear pass (finder) ---
    #: a pixel differs clearly from the tray above this grey-level difference (largest channel)
    diff_threshold: int = 40
    #: the tray estimate is a median over cells of this many working pixels: wider than a die...
    bg_cell: int = 8
    #: ...over this many cells across: narrow enough to follow the cup's shadow
    bg_median: int = 5
    #: disc (diameter) that closes a die's marks into its body before the opening
    close_side: int = 3
    #: how many times that closing runs
    close_iterations: int = 2
    #: disc (diameter) that opens away thin things (the cup's rim, scratches) but keeps dice
    open_side: int = 7

    # --- which blobs may be dice (finder) ---
    #: smallest die side, as a share of the frame's long side (at the default working side)
    min_side: float = 0.018
    #: largest die side, the same share
    max_side: float = 0.2
    #: a blob thinner than this share of ``min_side`` is a line, never a die
    min_thickness: float = 0.6
    #: a blob longer than this many largest dice is a wall or a dark frame, never a group of dice
    giant_sides: float = 3.2
    #: a blob gives the die size when it is this square or squarer...
    single_aspect: float = 1.25
    #: ...and fills at least this share of its rotated box
    single_fill: float = 0.8
    #: which percentile of those single blobs' areas is the die's: the largest ones, so crumbs never shrink it
    ref_percentile: int = 75
    #: a die's square is dropped when it is longer than wide by more than this (a line, a shadow's edge)
    line_aspect: float = 2.2
    #: a die's square longer than wide by more than this is flagged misshapen (leaning, or two dice)
    misshapen_aspect: float = 1.3
    #: the same for a die cut out of a touching group, whose cut edges are rougher
    misshapen_aspect_cut: float = 1.45

    # --- opening blobs that are not one clean die (finder ``_refine``) ---
    #: a blob is one clean die, left as it is, when it fills this share of its hull...
    clean_solidity: float = 0.8
    #: ...is no longer than wide by more than this...
    clean_aspect: float = 1.3
    #: ...and its hull is under this many die areas
    clean_area: float = 1.6
    #: the disc that opens any other blob, in die sides: thin things glued to a die fall away
    refine_reach: float = 0.6
    #: the wider disc that opens a wall or dark frame, in die sides: a frame is thicker than what glues dice
    wall_reach: float = 0.85
    #: a piece left by the opening is kept from this share of a die's area
    refine_min_piece: float = 0.3
    #: a piece of a wall is kept only when at least this share of a die's side wide (not a strip of the wall)
    wall_piece_width: float = 0.75
    #: with no die size known, a blob filling less than this share of its hull is a ring or scribble
    no_size_fill: float = 0.45

    # --- cutting touching dice apart (finder) ---
    #: a blob whose hull is this many die areas or more holds touching dice...
    touching_hull: float = 1.6
    #: ...as does one with this many die's pixels or more
    touching_pixels: float = 1.5
    #: the most dice one blob is cut into
    most_dice_in_blob: int = 8
    #: a blob this much longer than wide, yet small enough for one die of the frame's size, is two smaller dice...
    pair_aspect: float = 1.6
    #: ...when at least this share of a die's side thick (not a strip of the tray's rim)
    pair_min_width: float = 0.5
    #: with no die size known, a blob this much longer than wide is a group of dice...
    group_aspect: float = 1.3
    #: ...as is one filling less than this share of its hull
    group_fill: float = 0.85
    #: a seam split's cores must each be at least this share of the largest one's area
    seam_core_share: float = 0.4
    #: a seam split's piece may be this much longer than wide, at most
    seam_piece_aspect: float = 1.5
    #: and, with the die size known, hold this share of a die's pixels, from...
    seam_piece_min: float = 0.5
    #: ...to this share
    seam_piece_max: float = 1.6
    #: a straight cut lies between this many die sides from the blob's end...
    cut_nearest: float = 0.85
    #: ...and this many
    cut_farthest: float = 1.25
    #: a cut piece this unlike a die (``_piece_score``) is tried again in its own axes
    recut_above: float = 0.25
    #: cuts whose worst piece is under this unlikeness explain the blob: no more dice are tried
    cut_clean: float = 0.2
    #: cuts whose worst piece is over this unlikeness failed: k-means splits the blob instead
    cut_failed: float = 0.45
    #: each extra piece costs this much unlikeness: fewer dice when two counts explain the blob alike
    cut_piece_cost: float = 0.05

    # --- the faint pass: pale dice on a pale tray (finder) ---
    #: a pixel differs faintly above this many times the frame's median difference...
    weak_k: float = 4.0
    #: ...and at least this many grey levels (lower loses other dice to noise)
    weak_min: int = 12
    #: disc (diameter) that closes the gaps in a faint die's outline before its inside is filled
    weak_close: int = 3
    #: disc (diameter) around a faint blob that must hold nothing clear: it keeps pale dice apart from clear ones
    weak_gap: int = 5
    #: how many clear pixels may lie just around a faint blob (its own edge, cut off by the opening)
    weak_around_clear: int = 6
    #: how many clear pixels (its marks) a faint blob must hold
    weak_mark_pixels: int = 3
    #: an outline is one square die up to this much longer than wide
    square_aspect: float = 1.4
    #: an open ring is filled to its hull when that hull is this square or squarer
    hull_aspect: float = 1.4
    #: an outline is solid when it fills this share of its rotated box
    outline_fill: float = 0.75
    #: an outline up to this much longer than wide (a pale die and its shadow) gives the die under its marks
    shadow_aspect: float = 2.0
    #: more clear pixels than this on such an outline's edge: it cuts through the marks, so it missed part of the die
    shadow_edge_marks: int = 8
    #: a clear blob covering less than this share of the faint outline around it is that pale die's marks
    pale_marks_share: float = 0.4
    #: pale dice's marks are looked for this many die sides around each small clear blob
    pale_marks_reach: float = 1.5

    # --- the reader's cascade (reader) ---
    #: a blob whose "not a die" probability is above this is dropped
    reject_above: float = 0.5
    #: dice read sure narrower than this (working pixels of the default look) are looked for again on a finer copy...
    small_die_side: float = 9.0
    #: ...that makes them about this wide (the finder's best size), as does a coarser copy for big dice
    fine_die_side: float = 14.0
    #: the finer copy's long side is at most this
    fine_max_work_side: int = 1280
    #: dice read sure wider than this (working pixels) are big: a coarser look adds the dice the default look missed
    big_die_side: float = 24.0
    #: the close-up look (dice a fifth of the frame and more) works on a copy this wide...
    close_up_work_side: int = 96
    #: ...and reports dice from this share of the frame's long side (smaller dice are the default look's)
    close_up_min_side: float = 0.12
    #: it skips blobs under this share of ``close_up_min_side`` before any work is spent on them
    close_up_prefilter: float = 0.8
    #: inside a sure close-up die, a found "die" smaller than this share of its side, or unsure, is one of its marks...
    close_up_mark_share: float = 0.3
    #: ...and a sure "one" smaller than this share is a mark too (a mark cut out with its rim of shade reads as a one)
    close_up_one_share: float = 0.45
    #: two looks' blobs are one die when the smaller is at least this share of the bigger's side, one's centre in the other
    same_die_size: float = 0.6
    #: a die whose side differs from the others' median by more than this share is suspect (leaning)
    size_tolerance: float = 0.3
    #: a die found by its marks is kept when its first look reads it a die at this confidence or more...
    marks_first: float = 0.5
    #: ...and it overlaps no die kept by more than this share of its area (dice never overlap)
    die_overlap: float = 0.15
    #: an unsure die is looked at again at its box's size, a little smaller and bigger (the finder's box is a guess)
    relook_spans: tuple[float, ...] = (1.0, 0.85, 1.15, 1.4)
    #: a look again makes a die sure only at this confidence: the best of several looks is a luckier draw
    relook_sure: float = 0.95
    #: squares of the dice's size over an off-size box are placed apart when the sizes differ by this share of a die
    square_step: float = 0.1
    #: of those squares, the surest this many at one look are read in their eight turns
    at_die_size_turned: int = 2
    #: an off-size box read at least this sure keeps its box (it stays doubted as leaning); one read less sure is
    #: tried in squares of the dice's size: a die glued to glare can read 0.97 in its box
    at_die_size_keep: float = 0.99

    # --- dice found by their marks (marks) ---
    #: a mark (or a six's row of three, merged) is at most this share of a die's side long...
    mark_length: float = 0.5
    #: ...and covers at most this share of a die's area
    mark_area: float = 0.15
    #: smaller than this many pixels it is grain or a line's crumb, not a mark
    mark_pixels: int = 4
    #: marks within this many times a found blob's square belong to that blob (its box often misses its outer marks)
    marks_clear_of: float = 1.25
    #: marks closer than this many die sides may be one face's (a two's lie about 0.75 apart)
    same_face: float = 0.8
    #: a face's marks all lie within this share of the die's side
    face_span: float = 0.9
    #: the fewest marks a lost die is proposed for (a lone mark is too often a speck of the tray)
    min_marks: int = 2
    #: more orphan marks than this in one frame is grain, not lost dice
    max_orphans: int = 60
    #: marks this much longer than wide lie along a face's diagonal (a two or a three): the square turns 45°
    diagonal_aspect: float = 2.5


#: The tunables the classic detector reads.
CLASSIC = ClassicTunables()
