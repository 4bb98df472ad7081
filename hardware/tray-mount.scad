// Elephants Bluff table: the tray, the camera under it and the cup ring.
//
// Units: millimetres. Open in OpenSCAD, F5 for the coloured preview, F6 + STL
// export for each printed part (set `part` below). Render the picture with
//   openscad -o tray-mount.png --imgsize=1400,1000 --viewall --autocenter \
//            --camera=0,0,80,62,0,340,950 --colorscheme=Tomorrow tray-mount.scad
//
// ---- The arithmetic (also echoed when the file is rendered) -----------------
// Camera: Raspberry Pi Camera Module 3 Wide (IMX708, 2.75 mm lens, f/2.2,
// autofocus 5 cm to infinity). Field of view from the datasheet: 102 degrees
// horizontal, 67 degrees vertical (120 diagonal).
// Tray window (where the dice may lie, inside and outside the cup ring):
// 240 x 160 mm. The camera looks straight up at its centre, long side along
// the sensor's long side.
//   distance to see the width : (240/2) / tan(102/2) = 120 / 1.235 =  97.2 mm
//   distance to see the depth : (160/2) / tan( 67/2) =  80 / 0.662 = 120.9 mm
// The depth decides: at least 121 mm from the lens to the tray's top face.
// With a margin for mounting error and the lens's softer corners: 135 mm,
// which shows 2*135*tan(51) = 333 mm by 2*135*tan(33.5) = 179 mm of tray plane:
// the window fits with 9 mm to spare at the short edges.
// Focus: a fixed lens position of 1/0.135 m = 7.4 dioptres (picamera2
// LensPosition; calibrate with BUILD.md step 6). Depth of field at f/2.2 with a
// 2-pixel circle of confusion at full resolution (2.8 um): hyperfocal
// H = f^2/(N c) = 2.75^2/(2.2*0.0028) = 1228 mm; near = s(H-f)/(H+s-2f) = 122 mm,
// far = s(H-f)/(H-s) = 151 mm. The die faces touching the acrylic (135 mm,
// seen 1 mm nearer through 3 mm of acrylic, n = 1.49) are well inside it.
// Resolution: 2304 px (2x2 binned mode) over 333 mm = 6.9 px/mm, a 16 mm die
// is about 110 px across.

part = "all";        // "all" (assembly preview), "camera_cradle", "corner_post", "cup_ring", "lens_hood"

// --- numbers that matter ---
hfov = 102;          // degrees, Camera Module 3 Wide, horizontal
vfov = 67;           // degrees, vertical
window_w = 240;      // tray window, along the sensor's long side
window_d = 160;      // tray window, along the short side
margin = 1.10;       // 10 % more distance than the minimum, rounded up to 5 mm
acrylic_t = 3;       // clear cast acrylic
min_distance = max((window_w / 2) / tan(hfov / 2), (window_d / 2) / tan(vfov / 2));
lens_to_tray = ceil(min_distance * margin / 5) * 5;   // 135 mm

// --- the camera board (Camera Module 3 Wide) ---
cam_board = [25, 24, 1.6];
cam_holes = [21, 12.5];         // M2 hole spacing
cam_hole_offset_y = 2;          // holes 2 mm from the top edge
lens_height = 11.5;             // lens front above the board's face (Wide lens)
standoff = 6;                   // board above the base

// --- the box ---
base_t = 9;                     // plywood base
sheet = [window_w + 20, window_d + 20];   // acrylic sheet, 10 mm in a rebate each side
lens_front_z = base_t + standoff + cam_board[2] + lens_height;
tray_z = lens_front_z + lens_to_tray - acrylic_t;  // bottom face of the acrylic
post = 22;                      // corner post section
rebate = 10;

// --- the cup ring (a bottomless cup: dice lie on the acrylic; the game's lid closes it) ---
cup_inner_d = 84;
cup_wall = 3;
cup_h = 45;
reed_pocket = [4, 21, 4];       // MDSR-7 style glass reed in the rim

// --- the LED ring (12 V COB ring, 72 mm outer, 50 mm inner) and the hood ---
ring_od = 72; ring_id = 50;
hood_od = 30;                   // 1.5 mm wall: 27 mm inside
hood_h = lens_height + 8;       // from the board's face: 8 mm above the lens front
// The hood must not cut into the view: from the lens front its rim is at
// atan(13.5 / 8) = 59 degrees off axis, outside the 51 degrees of half the horizontal FoV.
hood_clear_angle = atan(((hood_od - 3) / 2) / (hood_h - lens_height));
assert(hood_clear_angle > hfov / 2 + 3, "the lens hood would show in the corners of the picture");

echo(str("minimum lens-to-tray distance: ", min_distance, " mm; using ", lens_to_tray, " mm"));
echo(str("plane seen at that distance: ", 2 * lens_to_tray * tan(hfov / 2), " x ", 2 * lens_to_tray * tan(vfov / 2), " mm"));
echo(str("lens hood rim at ", hood_clear_angle, " degrees off axis (half FoV ", hfov / 2, ")"));
echo(str("lens position: ", 1000 / lens_to_tray, " dioptres; box height to the tray top: ", tray_z + acrylic_t, " mm"));

$fn = 64;

module camera_cradle() {
    // A plate on the base with M2 standoffs for the camera and a seat for the LED ring, which faces DOWN
    // onto the white base: the dice are lit by light bounced off the base and the white walls, never
    // by a bright spot the lens could see reflected in the acrylic (LIGHTING.md).
    difference() {
        union() {
            translate([-45, -45, 0]) cube([90, 90, 3]);
            for (sx = [-1, 1], sy = [-1, 1])
                translate([sx * cam_holes[0] / 2, sy * cam_holes[1] / 2 + (cam_board[1] / 2 - cam_hole_offset_y - cam_holes[1] / 2), 0])
                    cylinder(d = 5, h = 3 + standoff);
            // three arms holding the LED ring 30 mm above the base, light facing down
            for (a = [90, 210, 330]) rotate(a) translate([ring_id / 2 + 2, -4, 0]) cube([ring_od / 2 - ring_id / 2 + 6, 8, 33]);
        }
        for (sx = [-1, 1], sy = [-1, 1])
            translate([sx * cam_holes[0] / 2, sy * cam_holes[1] / 2 + (cam_board[1] / 2 - cam_hole_offset_y - cam_holes[1] / 2), -1])
                cylinder(d = 1.8, h = 20);   // self-tapping M2
        translate([0, -cam_board[1] / 2 - 8, -1]) cube([18, 10, 10], center = true);   // ribbon cable slot
    }
}

module lens_hood() {
    // Matte black tube around the lens, rising above the LED ring: the lens sees neither the ring's
    // edge nor light spilling sideways from it; low enough to stay out of the picture (see hood_h).
    difference() {
        cylinder(d = hood_od, h = hood_h);
        translate([0, 0, -1]) cylinder(d = hood_od - 3, h = hood_h + 2);
    }
}

module corner_post() {
    // Holds a corner of the acrylic in a rebate on its inner corner; the walls (5 mm white foam
    // board) are glued to its outer faces. Print four.
    difference() {
        cube([post, post, tray_z + acrylic_t]);
        translate([-1, -1, tray_z]) cube([rebate + 1, rebate + 1, acrylic_t + 1]);
    }
}

module cup_ring() {
    difference() {
        cylinder(d = cup_inner_d + 2 * cup_wall, h = cup_h);
        translate([0, 0, -1]) cylinder(d = cup_inner_d, h = cup_h + 2);
        // pocket for the reed switch, opening at the rim: the lid's magnet closes it
        translate([cup_inner_d / 2 + cup_wall / 2 - reed_pocket[0] / 2, -reed_pocket[1] / 2, cup_h - reed_pocket[2] - 6])
            cube([reed_pocket[0], reed_pocket[1], reed_pocket[2] + 7]);
    }
}

module camera_board() {
    color("green") translate([-cam_board[0] / 2, -cam_board[1] / 2, base_t + 3 + standoff]) cube(cam_board);
    color("black") translate([0, 0, base_t + 3 + standoff + cam_board[2]]) cylinder(d = 8, h = lens_height);
}

module view_cone() {
    // what the camera sees, up to the tray's top face
    h = lens_to_tray;
    color([0.2, 0.5, 1, 0.15]) translate([0, 0, lens_front_z])
        hull() {
            cube([0.1, 0.1, 0.1], center = true);
            translate([0, 0, h]) cube([2 * h * tan(hfov / 2), 2 * h * tan(vfov / 2), 0.1], center = true);
        }
}

module assembly() {
    color("BurlyWood") translate([-sheet[0] / 2 - post, -sheet[1] / 2 - post, 0]) cube([sheet[0] + 2 * post, sheet[1] + 2 * post, base_t]);
    color("white") translate([0, 0, base_t]) camera_cradle();
    camera_board();
    color("#333") translate([0, 0, base_t + 3 + standoff + cam_board[2]]) lens_hood();
    color("#ffe9a8") translate([0, 0, base_t + 30]) difference() { cylinder(d = ring_od, h = 3); translate([0, 0, -1]) cylinder(d = ring_id, h = 5); }
    for (mx = [0, 1], my = [0, 1])
        mirror([mx, 0, 0]) mirror([0, my, 0])
            color("SlateGray") translate([sheet[0] / 2 - rebate, sheet[1] / 2 - rebate, 0]) corner_post();
    // walls: white foam board, drawn see-through; the front one carries the buttons
    outer = [sheet[0] - 2 * rebate + 2 * post, sheet[1] - 2 * rebate + 2 * post];
    for (sy = [-1, 1]) color([1, 1, 1, 0.25]) translate([-outer[0] / 2, sy * (outer[1] / 2 + 2.5) - 2.5, base_t]) cube([outer[0], 5, tray_z - base_t]);
    for (sx = [-1, 1]) color([1, 1, 1, 0.25]) translate([sx * (outer[0] / 2 + 2.5) - 2.5, -outer[1] / 2, base_t]) cube([5, outer[1], tray_z - base_t]);
    color([0.8, 0.95, 1, 0.35]) translate([-sheet[0] / 2, -sheet[1] / 2, tray_z]) cube([sheet[0], sheet[1], acrylic_t]);
    color("DarkOrange") translate([-30, 20, tray_z + acrylic_t]) cup_ring();
    // the dice: one outside the ring, in view (RULES.md R6 allows it)
    for (p = [[-40, 10], [-18, 30], [60, -40]]) color("white") translate([p[0], p[1], tray_z + acrylic_t]) cube(16);
    // the buttons on the front edge
    front_y = -(sheet[1] - 2 * rebate + 2 * post) / 2 - 5;
    color("green") translate([-40, front_y, tray_z - 25]) rotate([90, 0, 0]) cylinder(d = 33, h = 8);
    color("red") translate([40, front_y, tray_z - 25]) rotate([90, 0, 0]) cylinder(d = 33, h = 8);
    color("gold") translate([0, front_y, tray_z - 25]) rotate([90, 0, 0]) cylinder(d = 5, h = 4);   // status LED
    view_cone();
}

if (part == "all") assembly();
else if (part == "camera_cradle") camera_cradle();
else if (part == "corner_post") corner_post();
else if (part == "cup_ring") cup_ring();
else if (part == "lens_hood") lens_hood();
